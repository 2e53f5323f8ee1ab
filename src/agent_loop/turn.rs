//! What the turn loop does next (pure): the decisions of 1.4.0's `runLoop`,
//! made from the facts the loop has gathered: how the response stopped, whether
//! the tool batch asks for another turn, `finishTurn`'s `action`, and whether the
//! queues held anything when polled.

/// How a response stopped, as far as the turn loop cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// `"error"` or `"aborted"`: the turn ends and so does the run; tool calls
    /// of the message are ignored.
    Failed,
    /// `"length"`: the message may be truncated, so every tool call fails unrun.
    Length,
    /// Anything else: tool calls run.
    Complete,
}

impl Stop {
    pub(crate) fn parse(reason: Option<&str>) -> Stop {
        match reason {
            Some("error" | "aborted") => Stop::Failed,
            Some("length") => Stop::Length,
            _ => Stop::Complete,
        }
    }
}

/// `finishTurn`'s `action`: `"end"`, `"continue"`, or anything else (no opinion).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    End,
    Continue,
    Default,
}

impl Action {
    pub(crate) fn parse(action: Option<&str>) -> Action {
        match action {
            Some("end") => Action::End,
            Some("continue") => Action::Continue,
            _ => Action::Default,
        }
    }
}

/// After a turn (not ended by `finishTurn`) and the steering poll that follows
/// it: whether `continue` is still an explicit request for one more turn. It is
/// not when the turn goes on anyway (more tool calls or steering messages).
pub(crate) fn explicit_continuation(action: Action, more_tool_calls: bool, steering: bool) -> bool {
    action == Action::Continue && !more_tool_calls && !steering
}

/// What the outer loop does once the inner loop has nothing left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Idle {
    /// Follow-up messages were queued: they start the next turn.
    FollowUps,
    /// `finishTurn` asked to continue: one more turn on the context alone.
    ContinueOnce,
    /// The run ends.
    Stop,
}

/// Follow-ups win over an explicit continuation; neither means the run ends.
pub(crate) fn when_idle(follow_ups: bool, explicit_continuation: bool) -> Idle {
    if follow_ups {
        Idle::FollowUps
    } else if explicit_continuation {
        Idle::ContinueOnce
    } else {
        Idle::Stop
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_reasons() {
        assert_eq!(Stop::parse(Some("error")), Stop::Failed);
        assert_eq!(Stop::parse(Some("aborted")), Stop::Failed);
        assert_eq!(Stop::parse(Some("length")), Stop::Length);
        for other in [Some("stop"), Some("toolUse"), Some(""), Some("Error"), None] {
            assert_eq!(Stop::parse(other), Stop::Complete, "{other:?}");
        }
    }

    #[test]
    fn finish_turn_actions() {
        assert_eq!(Action::parse(Some("end")), Action::End);
        assert_eq!(Action::parse(Some("continue")), Action::Continue);
        for other in [Some("END"), Some(""), Some("stop"), None] {
            assert_eq!(Action::parse(other), Action::Default, "{other:?}");
        }
    }

    #[test]
    fn continue_is_explicit_only_when_nothing_else_goes_on() {
        assert!(explicit_continuation(Action::Continue, false, false));
        assert!(!explicit_continuation(Action::Continue, true, false));
        assert!(!explicit_continuation(Action::Continue, false, true));
        assert!(!explicit_continuation(Action::Continue, true, true));
        for action in [Action::Default, Action::End] {
            for (more, steering) in [(false, false), (true, false), (false, true)] {
                assert!(!explicit_continuation(action, more, steering));
            }
        }
    }

    #[test]
    fn follow_ups_win_over_an_explicit_continuation() {
        assert_eq!(when_idle(true, true), Idle::FollowUps);
        assert_eq!(when_idle(true, false), Idle::FollowUps);
        assert_eq!(when_idle(false, true), Idle::ContinueOnce);
        assert_eq!(when_idle(false, false), Idle::Stop);
    }
}
