// streamProxy's options are exactly the serializable ones plus the proxy address and token.
import { streamProxy, type Model, type TranscriptContext } from "pi-agent-wasm";

declare const model: Model<any>;
declare const context: TranscriptContext;

// @ts-expect-error -- authToken is required
streamProxy(model, context, { proxyUrl: "https://proxy.example" });
// @ts-expect-error -- provider keys never reach the browser's proxy options
streamProxy(model, context, { authToken: "t", proxyUrl: "https://proxy.example", apiKey: "sk-..." });
// @ts-expect-error -- pi-ai's reasoning levels have no "off"
streamProxy(model, context, { authToken: "t", proxyUrl: "https://proxy.example", reasoning: "off" });
