//! The ITK instruction contract (`protos/instruction.proto` of the kit): what an agent of a
//! traversal is told to do, carried as the protobuf bytes of an `Instruction` in a message part
//! (`application/x-protobuf`, `instruction.bin`). Decoded here by hand (the messages are four
//! and small), with the nesting bounded, so that hostile bytes cost nothing but an error.

use a2a_core::{Error, Message, Part};

/// The media type and file name of an instruction part.
pub const MEDIA_TYPE: &str = "application/x-protobuf";
/// The file name an instruction part carries.
pub const FILE_NAME: &str = "instruction.bin";
/// How deeply instructions may nest (a chain of agents, a series of steps).
const MAX_DEPTH: usize = 64;

/// One instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Instruction {
    /// Call another agent with a nested instruction and return what it answered.
    CallAgent(CallAgent),
    /// Answer with this text; `hold_task` keeps the task working for a while after answering.
    ReturnResponse {
        /// The answer.
        response: String,
        /// Keep the task WORKING (for a client that resubscribes) instead of completing it.
        hold_task: bool,
    },
    /// Run each instruction in turn; the answers are joined, one per line.
    Steps(Vec<Instruction>),
}

/// `CallAgent`: get an agent's card, call it over a transport, return its answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallAgent {
    /// The binding: `JSONRPC`, `HTTP+JSON` (`HTTP_JSON`, `REST`) or `GRPC`.
    pub transport: String,
    /// Where the agent card is (a base URL or the card's URL).
    pub agent_card_uri: String,
    /// The nested instruction, as the bytes to forward.
    pub instruction: Vec<u8>,
    /// Call with SendStreamingMessage.
    pub streaming: bool,
    /// How to call.
    pub behavior: CallBehavior,
}

/// How [`CallAgent`] calls.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum CallBehavior {
    /// A plain send.
    #[default]
    SendMessage,
    /// A send that registers a webhook at `<url>/notifications`.
    PushNotification {
        /// The receiver's base URL.
        url: String,
    },
    /// A streaming send, dropped after its first event, then SubscribeToTask.
    Resubscribe,
}

impl Instruction {
    /// The instruction a message carries: its first part with the instruction media type or
    /// file name, as raw bytes.
    pub fn of(message: &Message) -> Option<Result<Self, Error>> {
        let part = message.parts.iter().find(|p| {
            p.media_type.as_deref() == Some(MEDIA_TYPE) || p.filename.as_deref() == Some(FILE_NAME)
        })?;
        let a2a_core::PartContent::Raw(bytes) = &part.content else {
            return Some(Err(bad("the instruction part holds no bytes")));
        };
        Some(Self::decode(bytes))
    }

    /// Decodes an `Instruction` message.
    pub fn decode(bytes: &[u8]) -> Result<Self, Error> {
        decode_instruction(bytes, 0)
    }

    /// Whether answering ends with a held task (a `ReturnResponse` with `hold_task`, here or in
    /// a series of steps; a called agent holds its own).
    pub fn holds(&self) -> bool {
        match self {
            Instruction::ReturnResponse { hold_task, .. } => *hold_task,
            Instruction::Steps(steps) => steps.iter().any(Instruction::holds),
            Instruction::CallAgent(_) => false,
        }
    }

    /// The protobuf bytes of this instruction.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            Instruction::CallAgent(call) => put_bytes(&mut out, 1, &call.encode()),
            Instruction::ReturnResponse {
                response,
                hold_task,
            } => {
                let mut inner = Vec::new();
                put_bytes(&mut inner, 1, response.as_bytes());
                if *hold_task {
                    put_varint_field(&mut inner, 2, 1);
                }
                put_bytes(&mut out, 2, &inner);
            }
            Instruction::Steps(steps) => {
                let mut inner = Vec::new();
                for step in steps {
                    put_bytes(&mut inner, 1, &step.encode());
                }
                // RESPONSE_GENERATOR_CONCAT: the only way answers are combined.
                put_varint_field(&mut inner, 2, 1);
                put_bytes(&mut out, 3, &inner);
            }
        }
        out
    }

    /// A user message carrying this instruction, as the ITK agents send one.
    pub fn to_message(&self) -> Message {
        Message::new(
            a2a_core::Role::User,
            [Part::raw(self.encode())
                .with_media_type(MEDIA_TYPE)
                .with_filename(FILE_NAME)],
        )
    }
}

impl CallAgent {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put_bytes(&mut out, 1, self.transport.as_bytes());
        put_bytes(&mut out, 2, self.agent_card_uri.as_bytes());
        put_bytes(&mut out, 3, &self.instruction);
        if self.streaming {
            put_varint_field(&mut out, 4, 1);
        }
        match &self.behavior {
            CallBehavior::SendMessage => put_bytes(&mut out, 5, &[]),
            CallBehavior::PushNotification { url } => {
                let mut inner = Vec::new();
                put_bytes(&mut inner, 1, url.as_bytes());
                put_bytes(&mut out, 6, &inner);
            }
            CallBehavior::Resubscribe => put_bytes(&mut out, 7, &[]),
        }
        out
    }
}

fn bad(why: impl std::fmt::Display) -> Error {
    Error::invalid_params("message.parts", format!("not an ITK instruction: {why}"))
}

fn decode_instruction(bytes: &[u8], depth: usize) -> Result<Instruction, Error> {
    if depth > MAX_DEPTH {
        return Err(bad(format!("nested more than {MAX_DEPTH} deep")));
    }
    let mut step = None;
    for field in Fields(bytes) {
        match field? {
            (1, Value::Bytes(b)) => step = Some(Instruction::CallAgent(decode_call(b)?)),
            (2, Value::Bytes(b)) => {
                let (mut response, mut hold_task) = (String::new(), false);
                for field in Fields(b) {
                    match field? {
                        (1, Value::Bytes(s)) => response = string(s)?,
                        (2, Value::Varint(v)) => hold_task = v != 0,
                        _ => {}
                    }
                }
                step = Some(Instruction::ReturnResponse {
                    response,
                    hold_task,
                });
            }
            (3, Value::Bytes(b)) => {
                let mut steps = Vec::new();
                for field in Fields(b) {
                    if let (1, Value::Bytes(s)) = field? {
                        steps.push(decode_instruction(s, depth + 1)?);
                    }
                }
                step = Some(Instruction::Steps(steps));
            }
            _ => {}
        }
    }
    step.ok_or_else(|| bad("no step"))
}

fn decode_call(bytes: &[u8]) -> Result<CallAgent, Error> {
    let mut call = CallAgent {
        transport: String::new(),
        agent_card_uri: String::new(),
        instruction: Vec::new(),
        streaming: false,
        behavior: CallBehavior::SendMessage,
    };
    for field in Fields(bytes) {
        match field? {
            (1, Value::Bytes(s)) => call.transport = string(s)?,
            (2, Value::Bytes(s)) => call.agent_card_uri = string(s)?,
            (3, Value::Bytes(b)) => call.instruction = b.to_vec(),
            (4, Value::Varint(v)) => call.streaming = v != 0,
            (5, Value::Bytes(_)) => call.behavior = CallBehavior::SendMessage,
            (6, Value::Bytes(b)) => {
                let mut url = String::new();
                for field in Fields(b) {
                    if let (1, Value::Bytes(s)) = field? {
                        url = string(s)?;
                    }
                }
                call.behavior = CallBehavior::PushNotification { url };
            }
            (7, Value::Bytes(_)) => call.behavior = CallBehavior::Resubscribe,
            _ => {}
        }
    }
    if call.agent_card_uri.is_empty() {
        return Err(bad("call_agent has no agent_card_uri"));
    }
    Ok(call)
}

fn string(bytes: &[u8]) -> Result<String, Error> {
    String::from_utf8(bytes.to_vec()).map_err(|_| bad("a string field is not UTF-8"))
}

/// A field's value, by wire type (fixed-width values are skipped: the contract has none).
enum Value<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

/// The fields of a protobuf message, in order.
struct Fields<'a>(&'a [u8]);

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u64, Value<'a>), Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.0.is_empty() {
            return None;
        }
        Some(self.field())
    }
}

impl<'a> Fields<'a> {
    fn field(&mut self) -> Result<(u64, Value<'a>), Error> {
        let key = self.varint()?;
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => self.skip(8)?,
            2 => {
                let len = usize::try_from(self.varint()?).map_err(|_| bad("a length overflows"))?;
                let (value, rest) = self
                    .0
                    .split_at_checked(len)
                    .ok_or_else(|| bad("a field runs past the end"))?;
                self.0 = rest;
                Value::Bytes(value)
            }
            5 => self.skip(4)?,
            other => return Err(bad(format!("wire type {other}"))),
        };
        Ok((key >> 3, value))
    }

    fn skip(&mut self, n: usize) -> Result<Value<'a>, Error> {
        let (_, rest) = self
            .0
            .split_at_checked(n)
            .ok_or_else(|| bad("a field runs past the end"))?;
        self.0 = rest;
        Ok(Value::Fixed)
    }

    fn varint(&mut self) -> Result<u64, Error> {
        let mut value = 0u64;
        for (i, byte) in self.0.iter().enumerate().take(10) {
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                self.0 = &self.0[i + 1..];
                return Ok(value);
            }
        }
        Err(bad("a varint is cut short or too long"))
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_varint_field(out: &mut Vec<u8>, field: u64, v: u64) {
    put_varint(out, field << 3);
    put_varint(out, v);
}

fn put_bytes(out: &mut Vec<u8>, field: u64, bytes: &[u8]) {
    put_varint(out, (field << 3) | 2);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::{CallAgent, CallBehavior, Instruction};

    #[test]
    fn an_instruction_round_trips_through_its_protobuf_bytes() {
        let leaf = Instruction::ReturnResponse {
            response: "leaf".into(),
            hold_task: true,
        };
        let call = Instruction::CallAgent(CallAgent {
            transport: "GRPC".into(),
            agent_card_uri: "http://127.0.0.1:1".into(),
            instruction: leaf.encode(),
            streaming: true,
            behavior: CallBehavior::PushNotification {
                url: "http://127.0.0.1:2".into(),
            },
        });
        let steps = Instruction::Steps(vec![call, leaf]);
        assert_eq!(Instruction::decode(&steps.encode()).unwrap(), steps);
        assert!(steps.holds());
        assert!(
            Instruction::decode(&[0x0a, 0x05, 0x01]).is_err(),
            "cut short"
        );
        assert!(Instruction::decode(&[]).is_err(), "no step");
    }

    #[test]
    fn nesting_is_bounded() {
        let mut deep = Instruction::ReturnResponse {
            response: "x".into(),
            hold_task: false,
        };
        for _ in 0..100 {
            deep = Instruction::Steps(vec![deep]);
        }
        assert!(Instruction::decode(&deep.encode()).is_err());
    }
}
