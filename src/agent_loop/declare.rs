//! `declareToolChanges`: make the transcript declare exactly the
//! run's current tools, by rewriting the last pending system message or
//! inserting one before the first non-system pending message.

use crate::prelude::*;
use core::cell::RefCell;
use js_sys::{Array, Map};
use wasm_bindgen::prelude::*;

use crate::js::values::to_array;
use crate::js::view::{self, view};
use crate::transcript::tool_changes;

fn is_system(message: &JsValue) -> Result<bool, JsValue> {
    Ok(view::is_str(&view::field(message, |m| m.role())?, "system"))
}

fn non_empty(list: &JsValue) -> bool {
    Array::is_array(list) && list.unchecked_ref::<Array>().length() > 0
}

#[wasm_bindgen(module = "/src/agent_loop/declare.js")]
extern "C" {
    #[wasm_bindgen(js_name = toolDeclarationJson, catch)]
    fn tool_declaration_json(tool: &JsValue) -> Result<String, JsValue>;
    #[wasm_bindgen(js_name = systemMessagesFrom, catch)]
    fn system_messages_from(messages: &Array, from: u32) -> Result<Array, JsValue>;
    #[wasm_bindgen(js_name = toolsSignature, catch)]
    fn tools_signature(tools: &JsValue) -> Result<u32, JsValue>;
    /// `[declaration, json]` of a tool.
    #[wasm_bindgen(js_name = toolDeclaration, catch)]
    fn tool_declaration(tool: &JsValue) -> Result<Array, JsValue>;
    /// `message` with its `toolsAdded`/`toolsRemoved` replaced (empty lists dropped).
    #[wasm_bindgen(js_name = withToolChanges, catch)]
    fn with_tool_changes(
        message: &JsValue,
        added: &Array,
        removed: &Array,
    ) -> Result<JsValue, JsValue>;
    /// A new system message that only declares tool changes.
    #[wasm_bindgen(js_name = toolUpdateMessage)]
    fn tool_update_message(added: &Array, removed: &Array) -> JsValue;
    #[wasm_bindgen(js_name = toolRef)]
    fn tool_ref(name: &JsValue) -> JsValue;
    /// Applies a system message's `toolsRemoved`, then `toolsAdded`, to the map
    /// (the one tool replay, shared with `reset()`'s baseline).
    #[wasm_bindgen(js_name = applyToolChanges, catch)]
    fn apply_tool_changes(tools: &Map, message: &JsValue) -> Result<(), JsValue>;
    /// The declarations of a copy of `tools` with the system messages of `messages` applied.
    #[wasm_bindgen(js_name = toolsAfter, catch)]
    fn tools_after(tools: &Map, messages: &Array) -> Result<Array, JsValue>;
}

/// The tools a transcript declares (a JS `Map` of name → declaration), remembered with what it was replayed
/// from, so the next request replays only the messages added since. The cache
/// is trusted only while the transcript still holds the same object at the
/// last replayed position and every replayed system message at its index:
/// edits of ordinary messages cannot change tools; anything else invalidates it.
#[derive(Default)]
pub struct ToolReplay {
    len: u32,
    last: JsValue,
    systems: Vec<(u32, JsValue)>,
    /// Made when the first system message is replayed: an empty cache (the one
    /// `update` swaps in while it runs outside the borrow) makes no JS object.
    tools: Option<Map>,
    /// Changes whenever `tools` may have changed.
    generation: u64,
    /// `(generation, tools signature)` of the last request that declared
    /// nothing: the same pair means the same answer, without comparing
    /// declarations again.
    settled: Option<(u64, u32)>,
}

/// Shared between the requests of a run, and between the runs of an `Agent`.
pub type ReplayCache = alloc::rc::Rc<RefCell<ToolReplay>>;

impl ToolReplay {
    fn still_valid(&self, messages: &Array) -> bool {
        let len = messages.length();
        if len < self.len {
            return false;
        }
        if self.len > 0 && messages.get(self.len - 1) != self.last {
            return false;
        }
        self.systems.iter().all(|(i, m)| messages.get(*i) == *m)
    }

    /// Brings the cache up to date with `messages`.
    fn update(&mut self, messages: &Array) -> Result<(), JsValue> {
        if !self.still_valid(messages) {
            let generation = self.generation + 1;
            *self = ToolReplay::default();
            self.generation = generation;
        }
        let found = system_messages_from(messages, self.len)?;
        let mut i = 0;
        while i + 1 < found.length() {
            let index = found.get(i).as_f64().unwrap_or(0.0) as u32;
            let message = found.get(i + 1);
            apply_tool_changes(self.tools.get_or_insert_with(Map::new), &message)?;
            self.generation += 1;
            self.systems.push((index, message));
            i += 2;
        }
        self.len = messages.length();
        self.last = if self.len > 0 {
            messages.get(self.len - 1)
        } else {
            JsValue::UNDEFINED
        };
        Ok(())
    }
}

/// `(name, tool, declaration JSON)` for a list of tools; declaration objects
/// are built only for the tools that turn out to be added.
fn declarations(
    tools: impl Iterator<Item = JsValue>,
) -> Result<Vec<(String, JsValue, String)>, JsValue> {
    let mut out = Vec::new();
    for tool in tools {
        let json = tool_declaration_json(&tool)?;
        let name = view::field(&tool, |t| t.name())?
            .as_string()
            .unwrap_or_default();
        out.push((name, tool, json));
    }
    Ok(out)
}

pub fn declare_tool_changes(
    context: &JsValue,
    pending: &Array,
    cache: &ReplayCache,
) -> Result<Array, JsValue> {
    let len = pending.length();
    let mut system_index = None;
    for i in (0..len).rev() {
        if is_system(&pending.get(i))? {
            system_index = Some(i);
            break;
        }
    }
    let pending_system = system_index.map(|i| pending.get(i));
    let empty = Array::new();
    let baseline = match (system_index, &pending_system) {
        (Some(index), Some(message)) => {
            let copy = Array::from(pending);
            copy.set(index, with_tool_changes(message, &empty, &empty)?);
            copy
        }
        _ => pending.clone(),
    };

    let messages = super::messages_of(context)?;
    let tools = view::field(context, |c| c.tools())?;
    // Nothing pending can declare tools and neither the transcript's tools nor
    // the runtime tools changed since a request that declared nothing.
    // Updated outside the borrow: the update reads the transcript through JS,
    // whose getters may reach the agent again (which then sees no cache).
    let generation = {
        let mut c = core::mem::take(&mut *cache.borrow_mut());
        let updated = c.update(&messages);
        let generation = c.generation;
        *cache.borrow_mut() = c;
        updated?;
        generation
    };
    let key = match system_index {
        None => Some((generation, tools_signature(&tools)?)),
        Some(_) => None,
    };
    if key.is_some() && cache.borrow().settled == key {
        return Ok(pending.clone());
    }
    let transcript_tools = cache.borrow().tools.clone().unwrap_or_default();
    let previous = declarations(tools_after(&transcript_tools, &baseline)?.iter())?;
    let current = if view::is_object(&tools) {
        declarations(to_array(&tools)?.iter())?
    } else {
        Vec::new()
    };
    let prev_keys: Vec<(&str, &str)> = previous
        .iter()
        .map(|(n, _, j)| (n.as_str(), j.as_str()))
        .collect();
    let cur_keys: Vec<(&str, &str)> = current
        .iter()
        .map(|(n, _, j)| (n.as_str(), j.as_str()))
        .collect();
    let (added_idx, removed_idx) = tool_changes(&prev_keys, &cur_keys);
    let added = Array::new();
    for i in added_idx {
        if let Some((_, tool, _)) = current.get(i) {
            added.push(&tool_declaration(tool)?.get(0));
        }
    }
    let removed = Array::new();
    for i in removed_idx {
        if let Some((name, _, _)) = previous.get(i) {
            removed.push(&tool_ref(&JsValue::from_str(name)));
        }
    }
    let unchanged = added.length() == 0 && removed.length() == 0;

    if let (Some(index), Some(message)) = (system_index, pending_system) {
        if unchanged
            && !non_empty(&view(&message).tools_added()?)
            && !non_empty(&view(&message).tools_removed()?)
        {
            return Ok(pending.clone());
        }
        baseline.set(index, with_tool_changes(&message, &added, &removed)?);
        return Ok(baseline);
    }
    if unchanged {
        cache.borrow_mut().settled = key;
        return Ok(pending.clone());
    }
    let update = tool_update_message(&added, &removed);
    let mut insert_at = len;
    for i in 0..len {
        if !is_system(&pending.get(i))? {
            insert_at = i;
            break;
        }
    }
    let out = Array::new();
    for i in 0..len {
        if i == insert_at {
            out.push(&update);
        }
        out.push(&pending.get(i));
    }
    if insert_at == len {
        out.push(&update);
    }
    Ok(out)
}
