// Vue page: rows of finished messages (keyed by message object, the message as their only prop) plus one
// streaming row, rendered from pi-agent-wasm/vue's useAgent. Render functions, so no SFC compiler is needed.
import { createApp, defineComponent, h } from "vue";
import { useAgent } from "pi-agent-wasm/vue";
import { T, idOf, textOf, run } from "./harness.js";

// Vue re-renders a child only when its props change: a finished message keeps its identity, so its row stays.
const Row = defineComponent({
  props: { message: { type: Object, required: true } },
  setup(props) {
    return () => {
      const id = idOf(props.message);
      T.rowRender(id);
      return h("li", { "data-row-id": id }, `${props.message.role}: ${textOf(props.message)}`);
    };
  },
});

const StreamingRow = defineComponent({
  props: { message: { type: Object, required: true } },
  setup(props) {
    return () => {
      T.streamRender();
      return h("li", { "data-streaming": "" }, textOf(props.message));
    };
  },
});

const Chat = defineComponent({
  props: { agent: { type: Object, required: true }, coalesce: Boolean },
  setup(props) {
    const snapshot = useAgent(props.agent, props.coalesce ? undefined : { coalesce: false });
    return () =>
      h("ul", [
        ...snapshot.value.messages.map((m) => h(Row, { key: idOf(m), message: m })),
        snapshot.value.streamingMessage ? h(StreamingRow, { message: snapshot.value.streamingMessage }) : null,
      ]);
  },
});

const coalesce = new URLSearchParams(location.search).get("coalesce") !== "0";
window.__run = () =>
  run((agent, target) => {
    createApp(Chat, { agent, coalesce }).mount(target);
  }, coalesce);
window.__ready = true;
