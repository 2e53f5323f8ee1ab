//! Awaiting JS promises without creating closures per await.
//!
//! `JsFuture` makes two wasm-bindgen closures for every promise it awaits
//! (each a JS wrapper object, a `FinalizationRegistry` entry and a Rust box).
//! The loop awaits a promise per tool call and per stream event, so instead a
//! slot table keeps the waiting futures and one closure, made once, is called
//! back by `promise.then` with the slot's number. The number of microtask hops
//! is the same as with `JsFuture`.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/js/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = setSettler)]
    fn set_settler(settler: &JsValue);
    #[wasm_bindgen(js_name = watchSettle, catch)]
    fn watch_settle(value: &JsValue, slot: u32) -> Result<bool, JsValue>;
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

type Settler = Closure<dyn FnMut(u32, bool, JsValue)>;

thread_local! {
    static SLOTS: RefCell<Slots> = RefCell::new(Slots::default());
    static SETTLER: RefCell<Option<Settler>> = const { RefCell::new(None) };
}

fn on_settled(id: u32, ok: bool, value: JsValue) {
    let waker = SLOTS.with(|s| {
        let mut s = s.borrow_mut();
        let outcome = if ok { Ok(value) } else { Err(value) };
        match s.slots.get_mut(id as usize) {
            Some(slot @ Slot::Waiting(_)) => match std::mem::replace(slot, Slot::Ready(outcome)) {
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
    // Waking only queues the task: the borrow above is already released.
    if let Some(w) = waker {
        w.wake();
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
pub async fn settle(value: JsValue) -> Result<JsValue, JsValue> {
    let mut watched = false;
    let out = settle_from(|slot| {
        watched = watch_settle(&value, slot)?;
        Ok(watched)
    })
    .await?;
    Ok(if watched { out } else { value })
}

/// Like [`settle`] for a value produced by `start(slot)`, which calls JS once
/// to both produce it and watch it (`watchSettle`), returning whether there is
/// anything to await; `undefined` when there is not.
pub async fn settle_from(
    start: impl FnOnce(u32) -> Result<bool, JsValue>,
) -> Result<JsValue, JsValue> {
    install();
    let id = SLOTS.with(|s| s.borrow_mut().alloc());
    match start(id) {
        Ok(true) => Settled { id, done: false }.await,
        Ok(false) => {
            SLOTS.with(|s| s.borrow_mut().release(id));
            Ok(JsValue::UNDEFINED)
        }
        Err(e) => {
            SLOTS.with(|s| s.borrow_mut().release(id));
            Err(e)
        }
    }
}

struct Settled {
    id: u32,
    done: bool,
}

impl Future for Settled {
    type Output = Result<JsValue, JsValue>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let id = self.id;
        let ready = SLOTS.with(|s| {
            let mut s = s.borrow_mut();
            match s.slots.get_mut(id as usize) {
                Some(Slot::Waiting(w)) => {
                    if !w.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                        *w = Some(cx.waker().clone());
                    }
                    None
                }
                Some(slot @ Slot::Ready(_)) => match std::mem::replace(slot, Slot::Free) {
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
                self.done = true;
                Poll::Ready(outcome)
            }
            None => Poll::Pending,
        }
    }
}

impl Drop for Settled {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let id = self.id;
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
