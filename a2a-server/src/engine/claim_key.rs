//! The claim key of a message: what makes a retried send recognizable, across processes and
//! upgrades.

use crate::store::Scope;
use a2a_core::Message;

/// The deduplication key of a message: the caller's scope, the task (or context) it is sent
/// to, and its `messageId`.
pub(super) fn claim_key(scope: &Scope, message: &Message) -> String {
    let (kind, target) = match (&message.task_id, &message.context_id) {
        (Some(t), _) => ("t:", t.as_str()),
        (None, Some(c)) => ("c:", c.as_str()),
        (None, None) => ("", ""),
    };
    // The content is part of the key: a retry sends the same message, while two callers that
    // happen to reuse a message id (anonymous callers share a scope) get their own tasks.
    // The JSON of the content is hashed as it is written, without a buffer.
    let mut content = Fnv1a::default();
    let _ = serde_json::to_writer(&mut content, &(&message.parts, &message.metadata));
    // `tenant␟owner␟target␟messageId␟hash`, put together without `format!` (every send makes
    // one): the hash in 16 lowercase hex digits.
    let fields = [
        scope.tenant.as_deref().unwrap_or_default(),
        "\u{1f}",
        scope.owner.as_deref().unwrap_or_default(),
        "\u{1f}",
        kind,
        target,
        "\u{1f}",
        message.message_id.as_str(),
        "\u{1f}",
    ];
    let mut key = String::with_capacity(fields.iter().map(|f| f.len()).sum::<usize>() + 16);
    fields.iter().for_each(|f| key.push_str(f));
    for shift in (0..16).rev() {
        let digit = (content.0 >> (shift * 4)) & 0xf;
        key.push(char::from(
            b"0123456789abcdef"[usize::try_from(digit).unwrap_or(0)],
        ));
    }
    key
}

/// FNV-1a, 64 bits, over the bytes written to it: a stable (across builds and restarts)
/// fingerprint for claim keys.
struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl std::io::Write for Fnv1a {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a_core::{ContextId, TaskId};

    /// Claim keys outlive a process (the sled store keeps them for a day): the key of a
    /// message is exactly the one earlier versions wrote, so that a retry across an upgrade is
    /// still recognized.
    #[test]
    fn a_claim_key_is_scope_target_message_id_and_content_hash() {
        let scoped = Scope {
            tenant: Some("acme".into()),
            owner: Some("ann".into()),
        };
        let mut to_task = Message::user_text("hi");
        to_task.task_id = Some(TaskId::from("t1"));
        to_task.context_id = Some(ContextId::from("c1"));
        let mut to_context = Message::user_text("hi");
        to_context.context_id = Some(ContextId::from("c1"));
        let fresh = Message::user_text("hi");
        for (scope, message, target) in [
            (&scoped, &to_task, "t:t1"),
            (&Scope::default(), &to_context, "c:c1"),
            (&Scope::default(), &fresh, ""),
        ] {
            let mut hash = Fnv1a::default();
            serde_json::to_writer(&mut hash, &(&message.parts, &message.metadata)).unwrap();
            let expected = format!(
                "{}\u{1f}{}\u{1f}{target}\u{1f}{}\u{1f}{:016x}",
                scope.tenant.as_deref().unwrap_or_default(),
                scope.owner.as_deref().unwrap_or_default(),
                message.message_id,
                hash.0
            );
            assert_eq!(claim_key(scope, message), expected);
        }
        // The same message sent again has the same key; other content, another.
        assert_eq!(claim_key(&scoped, &to_task), claim_key(&scoped, &to_task));
        let mut other = to_task.clone();
        other.parts = vec![a2a_core::Part::text("ho")];
        assert_ne!(claim_key(&scoped, &other), claim_key(&scoped, &to_task));
    }
}
