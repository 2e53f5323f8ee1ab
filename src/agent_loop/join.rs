//! `Promise.all` for Rust futures on the single-threaded executor.
//!
//! Futures are polled in order on every wake-up, so each starts in source order
//! and runs to its first await before the next starts, as the reference's
//! closures do when `Promise.all` invokes them.

use crate::prelude::*;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

pub struct JoinAll<F: Future> {
    slots: Vec<Slot<F>>,
}

enum Slot<F: Future> {
    Running(Pin<Box<F>>),
    Done(F::Output),
    Taken,
}

pub fn join_all<F: Future>(futures: impl IntoIterator<Item = F>) -> JoinAll<F> {
    JoinAll {
        slots: futures
            .into_iter()
            .map(|f| Slot::Running(Box::pin(f)))
            .collect(),
    }
}

// The futures are boxed, so moving the slots never moves a pinned future.
impl<F: Future> Unpin for JoinAll<F> {}

impl<F: Future> Future for JoinAll<F> {
    type Output = Vec<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let mut pending = false;
        for slot in this.slots.iter_mut() {
            if let Slot::Running(f) = slot {
                match f.as_mut().poll(cx) {
                    Poll::Ready(out) => *slot = Slot::Done(out),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            return Poll::Pending;
        }
        let out = this
            .slots
            .iter_mut()
            .filter_map(|slot| match core::mem::replace(slot, Slot::Taken) {
                Slot::Done(out) => Some(out),
                _ => None,
            })
            .collect();
        Poll::Ready(out)
    }
}
