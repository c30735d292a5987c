//! Validation of incoming values against the spec's REQUIRED fields and ranges. Every failure is
//! [`ErrorKind::InvalidParams`](crate::ErrorKind::InvalidParams) naming the field.

use crate::error::Error;
use crate::message::{Message, Role};
use crate::params::*;
use crate::task::{Artifact, TaskState};

/// A value that can check itself against the spec.
pub trait Validate {
    /// `Ok` when valid; otherwise an invalid-params error naming the offending field.
    fn validate(&self) -> Result<(), Error>;
}

fn required(field: &str, empty: bool) -> Result<(), Error> {
    if empty {
        Err(Error::invalid_params(field, "is required"))
    } else {
        Ok(())
    }
}

fn history_length(field: &str, n: Option<i32>) -> Result<(), Error> {
    match n {
        Some(n) if n < 0 => Err(Error::invalid_params(
            field,
            format!("must not be negative (got {n})"),
        )),
        _ => Ok(()),
    }
}

impl Message {
    fn validate_at(&self, at: &str) -> Result<(), Error> {
        // The field's path is formatted only for an error: every SendMessage passes here.
        if self.message_id.is_empty() {
            return Err(Error::invalid_params(
                &format!("{at}.messageId"),
                "is required",
            ));
        }
        match &self.role {
            Role::User | Role::Agent => {}
            Role::Unspecified => {
                return Err(Error::invalid_params(&format!("{at}.role"), "is required"));
            }
            other => {
                return Err(Error::invalid_params(
                    &format!("{at}.role"),
                    format!("{:?} is not a valid role", other.as_str()),
                ));
            }
        }
        if self.parts.is_empty() {
            return Err(Error::invalid_params(
                &format!("{at}.parts"),
                "must contain at least one part",
            ));
        }
        Ok(())
    }
}

impl Validate for Message {
    fn validate(&self) -> Result<(), Error> {
        self.validate_at("message")
    }
}

impl Validate for Artifact {
    fn validate(&self) -> Result<(), Error> {
        required("artifact.artifactId", self.artifact_id.is_empty())?;
        if self.parts.is_empty() {
            return Err(Error::invalid_params(
                "artifact.parts",
                "must contain at least one part",
            ));
        }
        Ok(())
    }
}

/// A generation a client names: generations start at 1, so a negative one was never a task's.
fn generation(field: &str, value: Option<i64>) -> Result<(), Error> {
    match value {
        Some(n) if n < 0 => Err(Error::invalid_params(
            field,
            format!("must not be negative (got {n})"),
        )),
        _ => Ok(()),
    }
}

impl Validate for SendMessageRequest {
    fn validate(&self) -> Result<(), Error> {
        self.message.validate_at("message")?;
        if let Some(c) = &self.configuration {
            history_length("configuration.historyLength", c.history_length)?;
            generation("configuration.ifGenerationMatch", c.if_generation_match)?;
            if let Some(p) = &c.task_push_notification_config {
                p.validate_at("configuration.taskPushNotificationConfig")?;
            }
        }
        Ok(())
    }
}

impl Validate for GetTaskRequest {
    fn validate(&self) -> Result<(), Error> {
        required("id", self.id.is_empty())?;
        history_length("historyLength", self.history_length)?;
        generation("currentGeneration", self.current_generation)
    }
}

impl Validate for ListTasksRequest {
    fn validate(&self) -> Result<(), Error> {
        if let Some(n) = self.page_size
            && !(1..=MAX_PAGE_SIZE).contains(&n)
        {
            return Err(Error::invalid_params(
                "pageSize",
                format!("must be between 1 and {MAX_PAGE_SIZE} inclusive (got {n})"),
            ));
        }
        if let Some(s) = &self.status
            && (!s.is_known() || *s == TaskState::Unspecified)
        {
            return Err(Error::invalid_params(
                "status",
                format!("{:?} is not a valid task state", s.as_str()),
            ));
        }
        history_length("historyLength", self.history_length)
    }
}

impl Validate for CancelTaskRequest {
    fn validate(&self) -> Result<(), Error> {
        required("id", self.id.is_empty())
    }
}

impl Validate for SubscribeToTaskRequest {
    fn validate(&self) -> Result<(), Error> {
        required("id", self.id.is_empty())
    }
}

impl TaskPushNotificationConfig {
    fn validate_at(&self, at: &str) -> Result<(), Error> {
        let field = if at.is_empty() {
            "url".to_owned()
        } else {
            format!("{at}.url")
        };
        required(&field, self.url.is_empty())?;
        if let Some(auth) = &self.authentication {
            let field = if at.is_empty() {
                "authentication.scheme".to_owned()
            } else {
                format!("{at}.authentication.scheme")
            };
            required(&field, auth.scheme.is_empty())?;
        }
        Ok(())
    }
}

impl Validate for TaskPushNotificationConfig {
    fn validate(&self) -> Result<(), Error> {
        required("taskId", self.task_id.is_none())?;
        self.validate_at("")
    }
}

impl Validate for GetTaskPushNotificationConfigRequest {
    fn validate(&self) -> Result<(), Error> {
        required("taskId", self.task_id.is_empty())?;
        required("id", self.id.is_empty())
    }
}

impl Validate for DeleteTaskPushNotificationConfigRequest {
    fn validate(&self) -> Result<(), Error> {
        required("taskId", self.task_id.is_empty())?;
        required("id", self.id.is_empty())
    }
}

impl Validate for ListTaskPushNotificationConfigsRequest {
    fn validate(&self) -> Result<(), Error> {
        required("taskId", self.task_id.is_empty())?;
        if !(0..=MAX_PAGE_SIZE).contains(&self.page_size) {
            return Err(Error::invalid_params(
                "pageSize",
                format!(
                    "must be between 1 and {MAX_PAGE_SIZE} inclusive, or unset (got {})",
                    self.page_size
                ),
            ));
        }
        Ok(())
    }
}

impl Validate for GetExtendedAgentCardRequest {
    fn validate(&self) -> Result<(), Error> {
        Ok(())
    }
}
