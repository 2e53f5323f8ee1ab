//! Steering and follow-up queues (pure).

use crate::prelude::*;
use alloc::collections::VecDeque;

/// How many queued messages one poll takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueMode {
    /// Every queued message at once.
    All,
    /// The oldest message only (the default).
    OneAtATime,
}

impl QueueMode {
    /// Parses the JS option value; anything but `"all"` behaves as one-at-a-time,
    /// as in the reference.
    pub fn parse(value: Option<&str>) -> QueueMode {
        match value {
            Some("all") => QueueMode::All,
            _ => QueueMode::OneAtATime,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            QueueMode::All => "all",
            QueueMode::OneAtATime => "one-at-a-time",
        }
    }
}

/// A FIFO of pending messages with a drain mode.
#[derive(Debug)]
pub struct PendingQueue<T> {
    items: VecDeque<T>,
    pub mode: QueueMode,
}

impl<T: Clone> PendingQueue<T> {
    pub fn new(mode: QueueMode) -> Self {
        PendingQueue {
            items: VecDeque::new(),
            mode,
        }
    }
    pub fn enqueue(&mut self, item: T) {
        self.items.push_back(item);
    }
    pub fn len(&self) -> usize {
        self.items.len()
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    /// What `drain` would take, without taking it.
    pub fn peek(&self) -> Vec<T> {
        match self.mode {
            QueueMode::All => self.items.iter().cloned().collect(),
            QueueMode::OneAtATime => self.items.front().cloned().into_iter().collect(),
        }
    }
    /// Takes the messages one poll delivers.
    pub fn drain(&mut self) -> Vec<T> {
        match self.mode {
            QueueMode::All => self.items.drain(..).collect(),
            QueueMode::OneAtATime => self.items.pop_front().into_iter().collect(),
        }
    }
    /// Like [`peek`](Self::peek), but in one-at-a-time mode an entry that is not
    /// `present` (the reference tests the first entry's truthiness) yields
    /// nothing, and stays queued.
    pub fn peek_while(&self, present: impl Fn(&T) -> bool) -> Vec<T> {
        match self.mode {
            QueueMode::All => self.peek(),
            QueueMode::OneAtATime => self
                .items
                .front()
                .filter(|x| present(x))
                .cloned()
                .into_iter()
                .collect(),
        }
    }
    /// Takes what [`peek_while`](Self::peek_while) returns.
    pub fn drain_while(&mut self, present: impl Fn(&T) -> bool) -> Vec<T> {
        let taken = self.peek_while(present);
        for _ in 0..taken.len() {
            self.items.pop_front();
        }
        taken
    }
    pub fn clear(&mut self) {
        self.items.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_at_a_time_takes_the_oldest() {
        let mut q = PendingQueue::new(QueueMode::OneAtATime);
        q.enqueue(1);
        q.enqueue(2);
        assert_eq!(q.peek(), [1]);
        assert_eq!(q.drain(), [1]);
        assert_eq!(q.drain(), [2]);
        assert!(q.drain().is_empty());
    }

    #[test]
    fn all_takes_everything_and_mode_can_change() {
        let mut q = PendingQueue::new(QueueMode::All);
        q.enqueue(1);
        q.enqueue(2);
        assert_eq!(q.peek(), [1, 2]);
        q.mode = QueueMode::OneAtATime;
        assert_eq!(q.drain(), [1]);
        q.mode = QueueMode::All;
        assert_eq!(q.drain(), [2]);
    }

    #[test]
    fn an_absent_first_entry_blocks_one_at_a_time_like_the_reference() {
        let mut q = PendingQueue::new(QueueMode::OneAtATime);
        q.enqueue(0);
        q.enqueue(1);
        let present = |x: &i32| *x != 0;
        assert!(q.peek_while(present).is_empty());
        assert!(q.drain_while(present).is_empty());
        assert_eq!(q.len(), 2);
        q.mode = QueueMode::All;
        assert_eq!(q.drain_while(present), [0, 1]);
    }

    #[test]
    fn parse_defaults_to_one_at_a_time() {
        assert_eq!(QueueMode::parse(Some("all")), QueueMode::All);
        assert_eq!(QueueMode::parse(Some("bogus")), QueueMode::OneAtATime);
        assert_eq!(QueueMode::parse(None), QueueMode::OneAtATime);
    }
}
