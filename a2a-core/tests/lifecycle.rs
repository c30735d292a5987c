//! The task lifecycle (digest §5): every (from, to) pair of the nine known states, stated
//! explicitly, plus the state classes.

use a2a_core::TaskState::{self, *};

/// The nine known states, in the column order of [`ALLOWED`].
const STATES: [TaskState; 9] = [
    Unspecified,
    Submitted,
    Working,
    InputRequired,
    AuthRequired,
    Completed,
    Failed,
    Canceled,
    Rejected,
];

const Y: bool = true;
const N: bool = false;

/// `ALLOWED[from][to]`, rows and columns in [`STATES`] order:
///
/// - SUBMITTED / WORKING → WORKING, INPUT_REQUIRED, AUTH_REQUIRED, any terminal
///   (nothing moves back to SUBMITTED, not even SUBMITTED itself);
/// - INPUT_REQUIRED → WORKING, COMPLETED, FAILED, CANCELED, REJECTED;
/// - AUTH_REQUIRED → WORKING, FAILED, CANCELED, REJECTED (not COMPLETED: the agent must resume
///   work first);
/// - terminal and UNSPECIFIED → nothing.
#[rustfmt::skip]
const ALLOWED: [[bool; 9]; 9] = [
    //                 UNSP SUBM WORK INPT AUTH COMP FAIL CANC REJE
    /* UNSPECIFIED  */ [N,   N,   N,   N,   N,   N,   N,   N,   N],
    /* SUBMITTED    */ [N,   N,   Y,   Y,   Y,   Y,   Y,   Y,   Y],
    /* WORKING      */ [N,   N,   Y,   Y,   Y,   Y,   Y,   Y,   Y],
    /* INPUT_REQ    */ [N,   N,   Y,   N,   N,   Y,   Y,   Y,   Y],
    /* AUTH_REQ     */ [N,   N,   Y,   N,   N,   N,   Y,   Y,   Y],
    /* COMPLETED    */ [N,   N,   N,   N,   N,   N,   N,   N,   N],
    /* FAILED       */ [N,   N,   N,   N,   N,   N,   N,   N,   N],
    /* CANCELED     */ [N,   N,   N,   N,   N,   N,   N,   N,   N],
    /* REJECTED     */ [N,   N,   N,   N,   N,   N,   N,   N,   N],
];

#[test]
fn every_transition_between_known_states_is_as_the_table_says() {
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (i, from) in STATES.iter().enumerate() {
        for (j, to) in STATES.iter().enumerate() {
            checked += 1;
            if from.can_transition_to(to) != ALLOWED[i][j] {
                wrong.push(format!(
                    "{from} -> {to}: expected {}, got {}",
                    ALLOWED[i][j], !ALLOWED[i][j]
                ));
            }
        }
    }
    assert_eq!(checked, 81);
    assert!(wrong.is_empty(), "wrong transitions:\n{}", wrong.join("\n"));
}

#[test]
fn the_table_covers_every_known_state() {
    let mut all = TaskState::ALL.to_vec();
    let mut ours = STATES.to_vec();
    all.sort_by_key(|s| s.number());
    ours.sort_by_key(|s| s.number());
    assert_eq!(all, ours);
}

#[test]
fn unknown_states_go_nowhere_and_nothing_goes_to_them() {
    let unknown = TaskState::Unknown("TASK_STATE_PAUSED".into());
    for s in STATES {
        assert!(!unknown.can_transition_to(&s), "{unknown} -> {s}");
        assert!(!s.can_transition_to(&unknown), "{s} -> {unknown}");
    }
    assert!(!unknown.can_transition_to(&unknown));
}

#[test]
fn terminal_states_are_completed_failed_canceled_rejected() {
    let terminal: Vec<_> = STATES.iter().filter(|s| s.is_terminal()).cloned().collect();
    assert_eq!(terminal, [Completed, Failed, Canceled, Rejected]);
}

#[test]
fn interrupted_states_are_input_and_auth_required() {
    let interrupted: Vec<_> = STATES
        .iter()
        .filter(|s| s.is_interrupted())
        .cloned()
        .collect();
    assert_eq!(interrupted, [InputRequired, AuthRequired]);
}

#[test]
fn active_states_are_submitted_and_working() {
    let active: Vec<_> = STATES.iter().filter(|s| s.is_active()).cloned().collect();
    assert_eq!(active, [Submitted, Working]);
}

#[test]
fn every_known_state_but_unspecified_is_a_valid_initial_state() {
    let initial: Vec<_> = STATES
        .iter()
        .filter(|s| s.is_valid_initial())
        .cloned()
        .collect();
    assert_eq!(
        initial,
        [
            Submitted,
            Working,
            InputRequired,
            AuthRequired,
            Completed,
            Failed,
            Canceled,
            Rejected
        ]
    );
    assert!(!TaskState::Unknown("X".into()).is_valid_initial());
}

#[test]
fn the_classes_partition_the_valid_states() {
    for s in STATES {
        let classes = [s.is_active(), s.is_interrupted(), s.is_terminal()];
        let n = classes.iter().filter(|c| **c).count();
        let expected = usize::from(s != Unspecified);
        assert_eq!(n, expected, "{s} is in {n} classes");
    }
    let unknown = TaskState::Unknown("TASK_STATE_PAUSED".into());
    assert!(!unknown.is_active() && !unknown.is_interrupted() && !unknown.is_terminal());
}

#[test]
fn terminal_states_allow_nothing_and_interrupted_states_can_resume_work() {
    for s in STATES {
        if s.is_terminal() {
            assert!(STATES.iter().all(|t| !s.can_transition_to(t)), "{s}");
        }
        if s.is_interrupted() || s.is_active() {
            assert!(s.can_transition_to(&Working), "{s}");
            assert!(s.can_transition_to(&Canceled), "{s}");
        }
        assert!(!s.can_transition_to(&Submitted), "{s} -> SUBMITTED");
        assert!(!s.can_transition_to(&Unspecified), "{s} -> UNSPECIFIED");
    }
}

/// `ENDS_STREAM[i]`: whether a task's stream ends at `STATES[i]` (terminal or interrupted).
#[rustfmt::skip]
const ENDS_STREAM: [bool; 9] = [
    // UNSP SUBM WORK INPT AUTH COMP FAIL CANC REJE
       N,   N,   N,   Y,   Y,   Y,   Y,   Y,   Y,
];

#[test]
fn streams_end_at_terminal_and_interrupted_states_only() {
    for (s, ends) in STATES.iter().zip(ENDS_STREAM) {
        assert_eq!(s.ends_stream(), ends, "{s}");
        assert_eq!(
            s.ends_stream(),
            s.is_terminal() || s.is_interrupted(),
            "{s}"
        );
    }
    assert!(!TaskState::Unknown("TASK_STATE_PAUSED".into()).ends_stream());
}
