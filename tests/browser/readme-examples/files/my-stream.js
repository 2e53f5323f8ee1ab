// The `./my-stream.js` of the README's serveAgent example: a stream function (here, the example model's).
export { streamFn as streamSimple } from "/harness/harness.js";
