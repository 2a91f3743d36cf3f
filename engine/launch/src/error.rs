//! Why a launch could not be made: what is wrong and what to do about it.

/// Why a launch could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchError {
    /// What is wrong.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
}

impl LaunchError {
    pub(crate) fn new(message: impl Into<String>) -> LaunchError {
        LaunchError {
            message: message.into(),
            hint: None,
        }
    }

    pub(crate) fn hint(mut self, hint: impl Into<String>) -> LaunchError {
        self.hint = Some(hint.into());
        self
    }
}

impl From<String> for LaunchError {
    fn from(message: String) -> LaunchError {
        LaunchError::new(message)
    }
}

impl std::fmt::Display for LaunchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "error: {}", self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  = help: {hint}")?;
        }
        Ok(())
    }
}
