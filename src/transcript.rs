//! Tool-set replay and diffing over transcript declarations (pure).
//!
//! A transcript declares its tools through system messages: `toolsRemoved`
//! deletes names, then `toolsAdded` sets them, in message order, with the
//! insertion-order rules of a JS `Map` (re-setting a name keeps its place,
//! re-adding after a delete moves it to the end). Declarations are compared by
//! their JSON text, which the binding layer computes once per declaration.

/// The tools a transcript declares, in JS `Map` order. `D` is whatever handle the
/// caller keeps per declaration (a JS object in the binding layer).
#[derive(Clone, Debug)]
pub struct ToolSet<D> {
    entries: Vec<(String, D)>,
}

impl<D> Default for ToolSet<D> {
    fn default() -> Self {
        ToolSet {
            entries: Vec::new(),
        }
    }
}

impl<D> ToolSet<D> {
    pub fn new() -> Self {
        Self::default()
    }
    /// `map.delete(name)`.
    pub fn remove(&mut self, name: &str) {
        self.entries.retain(|(n, _)| n != name);
    }
    /// `map.set(name, declaration)`: an existing name keeps its position.
    pub fn set(&mut self, name: String, declaration: D) {
        match self.entries.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = declaration,
            None => self.entries.push((name, declaration)),
        }
    }
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    pub fn iter(&self) -> impl Iterator<Item = (&str, &D)> {
        self.entries.iter().map(|(n, d)| (n.as_str(), d))
    }
}

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
    fn set_keeps_position_and_readd_moves_to_end() {
        let mut set = ToolSet::new();
        set.set("a".into(), 1);
        set.set("b".into(), 2);
        set.set("a".into(), 3);
        assert_eq!(
            set.iter().map(|(n, d)| (n, *d)).collect::<Vec<_>>(),
            [("a", 3), ("b", 2)]
        );
        set.remove("a");
        set.set("a".into(), 4);
        assert_eq!(set.iter().map(|(n, _)| n).collect::<Vec<_>>(), ["b", "a"]);
    }

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
