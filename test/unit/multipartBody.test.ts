import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BodyMemory } from "../../src/core/http/BodyMemory.js";
import { multipartBody } from "../../src/core/http/multipartBody.js";
import { joinPieces } from "../../src/core/workers/ownedPieces.js";
import type { UploadedFile } from "../../src/core/http/UploadedFile.js";
import { jsonOf } from "../support/startTestServer.js";
import { startBodyParserApp } from "../support/bodyParserApp.js";

let app: Awaited<ReturnType<typeof startBodyParserApp>>;
let url: string;
let seen: {body: unknown, files: UploadedFile[]}[] = [];

beforeAll(async () => {
    // Silent: a client that goes away mid-upload is a socket parse error Koa would print; the test checks the server goes on.
    app = await startBodyParserApp(multipartBody({maxFileBytes: 1024, maxFiles: 2, maxFields: 8, maxFieldsBytes: 4096}, new BodyMemory(1024 * 1024)), (ctx) => {
        seen.push({body: ctx.request.body, files: ctx.state.files});
        ctx.body = {files: (ctx.state.files as UploadedFile[]).length};
    }, {silent: true});
    url = app.url;
});
afterAll(() => app.close());

function form(entries: [string, string | Blob, string?][]) {
    const data = new FormData();
    for (const [name, value, fileName] of entries)
        value instanceof Blob ? data.append(name, value, fileName) : data.append(name, value);
    return data;
}

describe("multipart/form-data bodies", () => {
    it("gives the fields as the body and the files' exact bytes, in memory", async () => {
        seen = [];
        const audio = new Uint8Array(1000).map((_, index) => index % 251);
        const response = await fetch(url, {method: "POST", body: form([
            ["model", "whisper-1"], ["language", "en"], ["timestamp_granularities[]", "word"], ["timestamp_granularities[]", "segment"],
            ["file", new Blob([audio], {type: "audio/wav"}), "speech.wav"]
        ])});
        expect(response.status).toBe(200);
        expect(seen[0].body).toEqual({model: "whisper-1", language: "en", "timestamp_granularities[]": ["word", "segment"]});
        const files = seen[0].files as UploadedFile[];
        expect(files.map(({parts: _, ...file}) => file)).toEqual([{field: "file", name: "speech.wav", mimeType: "audio/wav", size: 1000}]);
        expect(joinPieces(files[0].parts)).toEqual(audio);
    });

    it("refuses a file past the limit with a 413 naming `file` and the limit", async () => {
        const response = await fetch(url, {method: "POST", body: form([["file", new Blob([new Uint8Array(1025)]), "big.wav"]])});
        expect(response.status).toBe(413);
        expect((await jsonOf(response)).error).toMatchObject({param: "file", code: "request_too_large", message: expect.stringContaining("1 KB")});
    });

    it("refuses more files than allowed (a 400 naming `file`: a bad request, not a large one), and too many fields", async () => {
        const files = await fetch(url, {method: "POST", body: form([["a", new Blob(["1"]), "a"], ["b", new Blob(["2"]), "b"], ["c", new Blob(["3"]), "c"]])});
        expect(files.status).toBe(400);
        expect(await jsonOf(files)).toEqual({error: {
            message: "The request carries more than 2 files: upload at most 2 per request.", type: "invalid_request_error", param: "file", code: null
        }});
        const fields = await fetch(url, {method: "POST", body: form(Array.from({length: 9}, (_, index) => [`f${index}`, "x"] as [string, string]))});
        expect(fields.status).toBe(413);
    });

    it("answers 415 to another media type and 400 to a body that does not parse", async () => {
        const json = await fetch(url, {method: "POST", headers: {"Content-Type": "application/json"}, body: "{}"});
        expect(json.status).toBe(415);
        const broken = await fetch(url, {method: "POST", headers: {"Content-Type": "multipart/form-data; boundary=x"}, body: "--x\r\nnot a part"});
        expect(broken.status).toBe(400);
        expect((await jsonOf(broken)).error.code).toBe("invalid_multipart");
    });

    it("survives a client that goes away mid-upload, and serves the next request", async () => {
        seen = [];
        const port = Number(new URL(url).port);
        await new Promise<void>((resolve) => {
            const socket = net.connect(port, "127.0.0.1", () => {
                socket.write("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 5000\r\n\r\n" +
                    "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n\r\n" + "x".repeat(300), () => {
                    socket.destroy();
                    resolve();
                });
            });
        });
        const response = await fetch(url, {method: "POST", body: form([["file", new Blob(["ok"]), "ok.wav"]])});
        expect(response.status).toBe(200);
        expect(seen.map((request) => request.files.map((file) => file.name))).toEqual([["ok.wav"]]);
    });
});
