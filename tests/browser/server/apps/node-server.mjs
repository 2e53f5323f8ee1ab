// The test app on Node's http: PORT on 127.0.0.1.
import http from "node:http";
import { toNodeHandler } from "pi-agent-wasm/server";
import { proxy, sessions } from "./endpoints.mjs";
import { staticFile } from "./static.mjs";

const stream = toNodeHandler(proxy);
const store = toNodeHandler(sessions);
const server = http.createServer(async (req, res) => {
	const path = new URL(req.url, "http://x").pathname;
	if (path === "/api/stream") return stream(req, res);
	if (path.startsWith("/api/sessions/")) return store(req, res);
	const file = req.method === "GET" ? await staticFile(path) : undefined;
	if (!file) return res.writeHead(404).end();
	res.writeHead(200, { "content-type": file.type }).end(file.data);
});
server.listen(Number(process.env.PORT), "127.0.0.1", () => console.log(`listening on ${server.address().port}`));
