import { defineConfig, searchForWorkspaceRoot } from "vite";
import react from "@vitejs/plugin-react";

// `vite build` -> dist/, served by server.mjs. For `vite` (dev), start `node server.mjs` too: /api goes to it.
export default defineConfig({
	plugins: [react()],
	resolve: {
		// pi-agent-wasm is a symlink to ../pkg: its `import "react"` must find this app's copy.
		dedupe: ["react", "react-dom"],
	},
	optimizeDeps: {
		// Keep the wasm package out of pre-bundling so its `new URL("…_bg.wasm", import.meta.url)` stays valid.
		exclude: ["pi-agent-wasm"],
	},
	// The agent's worker (src/agent.worker.js): as an ES module, because the package entry still initialises its
	// wasm with a top-level await, which Vite's default iife worker format cannot hold.
	worker: { format: "es" },
	build: {
		target: "es2022",
		outDir: "dist",
		emptyOutDir: true,
		chunkSizeWarningLimit: 2000,
	},
	server: {
		port: 5174,
		strictPort: true,
		// The package is linked from ../pkg: let the dev server read its .wasm.
		fs: { allow: [searchForWorkspaceRoot(process.cwd()), "../pkg"] },
		host: "127.0.0.1",
		// changeOrigin: the server only answers requests addressed to its own host:port.
		proxy: { "/api": { target: `http://127.0.0.1:${process.env.PORT ?? 5173}`, changeOrigin: true } },
	},
});
