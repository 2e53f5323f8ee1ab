//! Awaiting JS promises without creating closures per await.
//!
//! `JsFuture` makes two wasm-bindgen closures for every promise it awaits
//! (each a JS wrapper object, a `FinalizationRegistry` entry and a Rust box).
//! The loop awaits a promise per tool call and per stream event, so instead a
//! slot table keeps the waiting futures and one closure, made once, is called
//! back by `promise.then` with the slot's number. That callback goes on with
//! the waiting task at once (spawn.rs `resume`): one microtask hop per awaited
//! promise, as a JS `await` takes, where `JsFuture` takes two.

use crate::prelude::*;
use core::cell::RefCell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/js/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = setSettler)]
    fn set_settler(settler: &JsValue);
    #[wasm_bindgen(js_name = watchSettle, catch)]
    fn watch_settle(value: &JsValue, slot: u32) -> Result<bool, JsValue>;
    #[wasm_bindgen(js_name = watchSettleUntilAbort, catch)]
    fn watch_settle_until_abort(
        value: &JsValue,
        slot: u32,
        signal: &JsValue,
        reject_when_abandoned: bool,
    ) -> Result<bool, JsValue>;
}

enum Slot {
    Free,
    Waiting(Option<Waker>),
    Ready(Result<JsValue, JsValue>),
    /// Its future was dropped before the promise settled; freed when it does.
    Abandoned,
}

#[derive(Default)]
struct Slots {
    slots: Vec<Slot>,
    free: Vec<u32>,
}

impl Slots {
    fn alloc(&mut self) -> u32 {
        if let Some(id) = self.free.pop() {
            if let Some(slot) = self.slots.get_mut(id as usize) {
                *slot = Slot::Waiting(None);
                return id;
            }
        }
        self.slots.push(Slot::Waiting(None));
        (self.slots.len() - 1) as u32
    }

    fn release(&mut self, id: u32) {
        if let Some(slot) = self.slots.get_mut(id as usize) {
            *slot = Slot::Free;
            self.free.push(id);
        }
    }
}

/// `Fn`, not `FnMut`: JS may settle a slot at once, from inside the very call
/// that starts it (glue.js `callSettleUntilAbort`), while a promise reaction's
/// settler call is still resuming its task, and an `FnMut` closure refuses to be
/// entered twice. It keeps no state of its own: the slots are in `SLOTS`, and no
/// borrow of it is held across a call into JS.
type Settler = Closure<dyn Fn(u32, bool, JsValue)>;

crate::local::local! {
    static SLOTS: RefCell<Slots> = RefCell::new(Slots::default());
    static SETTLER: RefCell<Option<Settler>> = const { RefCell::new(None) };
}

fn on_settled(id: u32, ok: bool, value: JsValue) {
    let waker = SLOTS.with(|s| {
        let mut s = s.borrow_mut();
        let outcome = if ok { Ok(value) } else { Err(value) };
        match s.slots.get_mut(id as usize) {
            Some(slot @ Slot::Waiting(_)) => match core::mem::replace(slot, Slot::Ready(outcome)) {
                Slot::Waiting(w) => w,
                _ => None,
            },
            Some(Slot::Abandoned) => {
                s.release(id);
                None
            }
            _ => None,
        }
    });
    // The borrow above is already released: the task may run now.
    if let Some(w) = waker {
        super::spawn::resume(w);
    }
}

fn install() {
    SETTLER.with(|s| {
        let mut s = s.borrow_mut();
        if s.is_none() {
            let settler: Settler = Closure::new(on_settled);
            set_settler(settler.as_ref());
            *s = Some(settler);
        }
    });
}

/// Awaits `value` if it is a thenable (through `Promise.resolve`, like
/// `await`); returns it as is otherwise. Reading `then` may throw: `Err`.
///
/// The JS side runs now, not at the first poll: every caller awaits the
/// result at once, so nothing can tell. Plain functions returning one future
/// type, instead of `async fn`s, keep a single copy of the polling code and
/// no state machine per caller (smaller wasm).
pub fn settle(value: JsValue) -> Settling {
    let id = begin();
    let outcome = watch_settle(&value, id);
    finish(id, outcome, value)
}

/// Like [`settle`], for a value whose outcome is moot once `signal` aborts: a
/// promise still pending two macrotasks after the abort settles as an
/// `Operation aborted` error, and what it settles to later is dropped
/// (glue.js `watchSettleUntilAbort`). An abandoned call thus reads as a call
/// that rejected on the abort, which the loop already handles.
pub fn settle_until_abort(value: JsValue, signal: &JsValue) -> Settling {
    let id = begin();
    let outcome = watch_settle_until_abort(&value, id, signal, true);
    finish(id, outcome, value)
}

/// Like [`settle_until_abort`], for reading a stream: abandoned two
/// macrotasks after the abort, the read settles as `undefined`, so that the
/// request can still end with the partial message it has.
pub fn read_until_abort(value: JsValue, signal: &JsValue) -> Settling {
    let id = begin();
    let outcome = watch_settle_until_abort(&value, id, signal, false);
    finish(id, outcome, value)
}

/// Like [`settle`] for a value produced by `start(slot)`, which calls JS once
/// to both produce it and watch it (`watchSettle`), returning whether there is
/// anything to await; `undefined` when there is not. JS may also settle the
/// slot before `start` returns (then it returns true): the outcome is ready at
/// the first poll.
pub fn settle_from(start: impl FnOnce(u32) -> Result<bool, JsValue>) -> Settling {
    let id = begin();
    let outcome = start(id);
    finish(id, outcome, JsValue::UNDEFINED)
}

fn begin() -> u32 {
    install();
    SLOTS.with(|s| s.borrow_mut().alloc())
}

fn finish(id: u32, watched: Result<bool, JsValue>, otherwise: JsValue) -> Settling {
    match watched {
        Ok(true) => Settling { id, ready: None },
        Ok(false) => {
            SLOTS.with(|s| s.borrow_mut().release(id));
            Settling::ready(Ok(otherwise))
        }
        Err(e) => {
            SLOTS.with(|s| s.borrow_mut().release(id));
            Settling::ready(Err(e))
        }
    }
}

/// No slot: the outcome is `ready`, or was already taken.
const NO_SLOT: u32 = u32::MAX;

/// A value being settled: either known already or waiting in a slot.
pub struct Settling {
    id: u32,
    ready: Option<Result<JsValue, JsValue>>,
}

impl Settling {
    pub fn ready(outcome: Result<JsValue, JsValue>) -> Settling {
        Settling {
            id: NO_SLOT,
            ready: Some(outcome),
        }
    }
}

impl Future for Settling {
    type Output = Result<JsValue, JsValue>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(outcome) = self.ready.take() {
            return Poll::Ready(outcome);
        }
        let id = self.id;
        if id == NO_SLOT {
            // Polled again after completing; a settled-nothing reads as `undefined`.
            return Poll::Ready(Ok(JsValue::UNDEFINED));
        }
        let ready = SLOTS.with(|s| {
            let mut s = s.borrow_mut();
            match s.slots.get_mut(id as usize) {
                Some(Slot::Waiting(w)) => {
                    if !w.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                        *w = Some(cx.waker().clone());
                    }
                    None
                }
                Some(slot @ Slot::Ready(_)) => match core::mem::replace(slot, Slot::Free) {
                    Slot::Ready(outcome) => {
                        s.free.push(id);
                        Some(outcome)
                    }
                    _ => None,
                },
                // Unreachable in practice; a settled-nothing reads as `undefined`.
                _ => Some(Ok(JsValue::UNDEFINED)),
            }
        });
        match ready {
            Some(outcome) => {
                self.id = NO_SLOT;
                Poll::Ready(outcome)
            }
            None => Poll::Pending,
        }
    }
}

impl Drop for Settling {
    fn drop(&mut self) {
        let id = self.id;
        if id == NO_SLOT {
            return;
        }
        SLOTS.with(|s| {
            let mut s = s.borrow_mut();
            match s.slots.get_mut(id as usize) {
                Some(slot @ Slot::Waiting(_)) => *slot = Slot::Abandoned,
                Some(Slot::Ready(_)) => s.release(id),
                _ => {}
            }
        });
    }
}

/// A [`Settling`] whose value is not wanted, only whether it failed.
pub struct Done(pub Settling);

impl Done {
    pub fn failed(error: JsValue) -> Done {
        Done(Settling::ready(Err(error)))
    }
}

impl Future for Done {
    type Output = Result<(), JsValue>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0).poll(cx).map(|r| r.map(|_| ()))
    }
}
