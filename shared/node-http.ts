/**
 * node:http and node:https, loaded with require rather than an ES module import: importing a
 * built-in as an ES module copies all of its exports, and node:http's include lazy getters
 * (WebSocket, MessageEvent, CloseEvent) whose first read loads Node's bundled undici, measured at
 * 20-60 ms of a function's cold start here for nothing the product uses. The Functions Framework
 * has required node:http already, so this costs nothing.
 */
import { createRequire } from "node:module";

const load = createRequire(import.meta.url);

export const http = load("node:http") as typeof import("node:http");
export const https = load("node:https") as typeof import("node:https");
