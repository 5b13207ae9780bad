import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { concretePath } from "../support/pathSpellings.js";
import { rawRequest } from "../support/rawRequest.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath } from "../support/testModels.js";

// Property: however a protected route's path is spelled (case, slashes, percent-encoding, dot
// segments, queries, fragments, parameters), a request without a valid key never gets a 2xx, nor a 5xx.
// Seeded; FUZZ_RUNS cases (npm test: 200; npm run fuzz: 5,000).
const runs = Number(process.env.FUZZ_RUNS ?? 200);
const seed = Number(process.env.FUZZ_SEED ?? 20261124);

let server: TestServer;
beforeAll(async () => {
    server = await startTestServer({models: [{id: "fake", task: "chat", path: tinyChatModelPath}], config: {apiKeys: ["sk-fuzz-key"]},
        factories: {chat: async () => new FakeChatEngine("fake", {pieces: ["served"]})}});
});
afterAll(() => server.stop());

type Twist = (path: string, pick: number) => string;
const twists: Twist[] = [
    (path, pick) => [...path].map((char, index) => (pick >> (index % 20)) & 1 ? char.toUpperCase() : char).join(""),
    (path, pick) => path.replace(/\//g, (slash) => pick % 3 === 0 ? "//" : slash),
    (path, pick) => [...path].map((char, index) => /[a-z0-9]/i.test(char) && (pick >> (index % 20)) & 1 ? `%${char.charCodeAt(0).toString(16).padStart(2, "0").toUpperCase()}` : char).join(""),
    (path) => `${path}/`,
    (path, pick) => ["/./", "/x/../", "/%2e/", "/.%2e/v1/../"][pick % 4] + path.slice(1),
    (path, pick) => `${path}${["?a=1", "#x", ";p", "%00", "%2f", "/.", "/.."][pick % 7]}`,
    (path) => path.replace(/\//g, "%2F")
];

describe("path spellings of every protected route, without a key", () => {
    it("never answer 2xx or 5xx", async () => {
        const routes = server.routes.filter((route) => !route.public);
        await fc.assert(fc.asyncProperty(
            fc.nat({max: routes.length - 1}),
            fc.array(fc.tuple(fc.nat({max: twists.length - 1}), fc.nat({max: 1 << 20})), {minLength: 1, maxLength: 4}),
            fc.nat({max: 3}), fc.boolean(),
            async (routeIndex, chosen, methodPick, wrongKey) => {
                const route = routes[routeIndex];
                const target = chosen.reduce((path, [twist, pick]) => twists[twist](path, pick), concretePath(route.path));
                const method = [...route.methods, "HEAD"][methodPick % (route.methods.length + 1)];
                const body = method === "POST" ? JSON.stringify({model: "fake", messages: [{role: "user", content: "hi"}]}) : undefined;
                const response = await rawRequest(server.url, {method, target, body, headers: {
                    ...(body ? {"Content-Type": "application/json"} : {}), ...(wrongKey ? {Authorization: "Bearer sk-fuzz-wrong"} : {})
                }}).catch((error: Error) => ({status: 0, body: error.message}));
                // 0: node refused to send the target (not a server answer).
                expect(response.status === 0 || (response.status >= 300 && response.status < 500), `${method} ${target} -> ${response.status}`).toBe(true);
            }), {numRuns: runs, seed});
    });
});
