import { describe, expect, it } from "vitest";
import { checkAnswer } from "../fuzz/requestFuzz.js";

const sse = (...events: string[]) => new Response(events.join(""), {status: 200, headers: {"Content-Type": "text/event-stream"}});
const mutation = {field: "n", body: "{}", contentType: "application/json"};

// The fuzz properties are only as good as this check: it must see a 5xx hidden in a stream that began as a 200.
describe("the fuzz suite's answer check", () => {
    it("fails a streamed 200 that carries an in-stream server_error event", async () => {
        const body = {error: {message: "boom", type: "server_error", param: null, code: "internal_error"}};
        expect(await checkAnswer(sse('data: {"a":1}\n\n', `event: error\ndata: ${JSON.stringify(body)}\n\n`), mutation)).toMatch(/in-stream server error/);
    });

    it("passes a streamed 200 whose in-stream error is the client's (a field found wrong after the headers)", async () => {
        const body = {error: {message: "bad", type: "invalid_request_error", param: "stop", code: null}};
        expect(await checkAnswer(sse('data: {"a":1}\n\n', `event: error\ndata: ${JSON.stringify(body)}\n\n`, "data: [DONE]\n\n"), mutation)).toBeNull();
    });

    it("fails a 5xx, and a 400 that names no param when a field was changed", async () => {
        expect(await checkAnswer(new Response("{}", {status: 500}), mutation)).toMatch(/status 500/);
        const unnamed = {error: {message: "bad", type: "invalid_request_error", param: null, code: null}};
        expect(await checkAnswer(new Response(JSON.stringify(unnamed), {status: 400}), mutation)).toMatch(/without a param/);
    });
});
