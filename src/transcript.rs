//! Tool-set diffing over transcript declarations (pure).
//!
//! A transcript declares its tools through system messages (`toolsRemoved`,
//! then `toolsAdded`, replayed in JS: `applyToolChanges` in
//! src/agent_loop/declare.js, which `reset()` also needs where there is no
//! wasm). Before each request the loop compares that replayed state with the
//! run's tools; this module decides what the difference is. Declarations are
//! compared by their JSON text, which the binding layer computes once per
//! declaration.

use crate::prelude::*;
/// What turns the `previous` tool state into `current`, as indices: the current
/// entries to add (new, or same name with a different declaration) and the
/// previous entries to remove (gone, or changed). Names map last-wins, as
/// `new Map(list.map(t => [t.name, t]))` does.
pub fn tool_changes(
    previous: &[(&str, &str)],
    current: &[(&str, &str)],
) -> (Vec<usize>, Vec<usize>) {
    (changed(current, previous), changed(previous, current))
}

/// The indices of `list` whose name is missing from `other` (last entry of a
/// name wins there) or maps to a different declaration.
fn changed(list: &[(&str, &str)], other: &[(&str, &str)]) -> Vec<usize> {
    list.iter()
        .enumerate()
        .filter(
            |(_, (name, json))| match other.iter().rposition(|(n, _)| n == name) {
                None => true,
                Some(i) => other.get(i).map(|o| o.1) != Some(*json),
            },
        )
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_declaration_is_removed_then_added() {
        let prev = [("a", "{1}"), ("b", "{2}"), ("c", "{3}")];
        let cur = [("b", "{2}"), ("c", "{changed}"), ("d", "{4}")];
        let (added, removed) = tool_changes(&prev, &cur);
        assert_eq!(added, [1, 2]);
        assert_eq!(removed, [0, 2]);
    }

    #[test]
    fn unchanged_is_empty() {
        let list = [("a", "{1}")];
        assert_eq!(tool_changes(&list, &list), (vec![], vec![]));
        assert_eq!(tool_changes(&[], &[]), (vec![], vec![]));
    }

    #[test]
    fn duplicate_names_compare_last_wins() {
        let prev = [("a", "{1}")];
        let cur = [("a", "{0}"), ("a", "{1}")];
        // The first current entry differs from prev's "a"; the last equals it, so prev stays.
        assert_eq!(tool_changes(&prev, &cur), (vec![0], vec![]));
    }
}
