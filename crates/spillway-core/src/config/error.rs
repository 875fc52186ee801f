//! A scenario that cannot be accepted, with the key and value named.

use std::fmt;

/// A scenario that cannot be accepted: which key, what value, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    pub key: String,
    pub value: String,
    pub message: String,
}

impl ScenarioError {
    pub fn new(key: &str, value: impl fmt::Display, message: impl Into<String>) -> Self {
        ScenarioError {
            key: key.to_string(),
            value: value.to_string(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.value.is_empty() {
            write!(f, "{}: {}", self.key, self.message)
        } else {
            write!(f, "{} = {}: {}", self.key, self.value, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}
