// The worker of the branch tests' WorkerAgent: the strict stream function (tools and hooks are the page's).
import { serveAgent } from "/pkg/worker/host.js";
import { streamFn } from "./stream.mjs";

serveAgent({ streamFn });
