import fc from "fast-check";

/**
 * Generators of hostile request bodies, as JSON text (so they can hold what JSON.stringify cannot:
 * duplicate keys, 1e400, -0, lone surrogates as escapes, truncation).
 */

/** Values that are wrong, extreme or odd for almost any field. */
export const nastyValue: fc.Arbitrary<string> = fc.oneof(
    fc.constantFrom(
        "null", "true", "false", "0", "-0", "-1", "1e400", "-1e400", "1e-400", "9007199254740993", "-9007199254740993",
        "0.5", "2.0000000000000001", "1e308", "4294967296", "[]", "{}", "[null]", "[[]]", "{\"\":null}", "\"\"", "\" \"",
        "\"\\ud800\"", "\"\\udfff\\ud800\"", "\"a\\u0000b\"", "\"\\u202eevil\\u202c\"", "\"\\ufeff\"", "\"𝟘🙂\"",
        "\"NaN\"", "\"Infinity\"", "\"1\"", "\"true\"", "\"null\"", "[1,2,3,4,5]", "{\"type\":\"text\"}",
        "{\"type\":\"json_schema\"}", "{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"x\",\"schema\":{\"type\":\"object\",\"properties\":{\"a\":{\"pattern\":\"x\"}}}}}",
        "{\"type\":\"json_object\"}", "[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":{\"minimum\":1}}}]",
        "[{\"type\":\"function\"}]", "\"required\"", "{\"type\":\"function\",\"function\":{\"name\":\"nope\"}}",
        "{\"1\":100}", "{\"-1\":5}", "{\"abc\":1}", "{\"99999999999\":-100}", "[\"a\",\"b\",\"c\",\"d\",\"e\"]",
        "[{\"role\":\"user\"}]", "[{\"role\":\"tool\",\"content\":\"x\"}]", "[{\"role\":\"assistant\",\"tool_calls\":[{}]}]",
        "[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:,\"}}]}]",
        "[{\"role\":\"user\",\"content\":[{\"type\":\"text\"}]}]", "[{\"role\":\"wizard\",\"content\":\"x\"}]",
        "{\"include_usage\":\"yes\"}", "[[1,2],[3]]", "[1,-1,99999999]", "[\"\"]", "[[]]",
        // Values some endpoints take (completions, speech, images), so valid branches are reached too.
        "{\"include_usage\":true}", "[\"a\",\"b\"]", "[[1,2],[3,4]]", "[0]", "[[0]]", "[\"hi\",[1,2]]", "3", "5", "6", "2", "4",
        "\"wav\"", "\"pcm\"", "\"mp3\"", "\"opus\"", "\"aac\"", "\"flac\"", "\"sse\"", "\"audio\"", "\"alloy\"", "\"am_onyx\"",
        "{\"id\":\"af_heart\"}", "{\"id\":\"nobody\"}", "{\"id\":7}", "{\"name\":\"af_heart\"}", "0.25", "4", "4.01", "0.24",
        "\"auto\"", "\"48x48\"", "\"64x64\"", "\"1024x1024\"", "\"1x1\"", "\"64x\"", "\"0x0\"", "\"-64x64\"", "\"1e3x1e3\"",
        "\"9999999999x9999999999\"", "\"b64_json\"", "\"url\"", "\"png\"", "\"jpeg\"", "\"webp\"", "\"transparent\"", "\"opaque\"",
        "\"hd\"", "\"standard\"", "\"high\"", "\"vivid\"", "\"low\"", "\"Euler\"", "\"Euler a\"", "\"DPM++ 2M Karras\"", "\"DDIM\"",
        "\"LCM\"", "100", "101", "50", "51", "30", "30.5", "4294967295", "4294967296", "\"<fim_middle>\"", "\"--ar 16:9 --v 6\"",
        "\"a cat --ar 2:1 --seed 5 --no dogs --stylize 1000 --chaos 100\"", "\"--ar 0:0\"", "\"--ar 99999:1\""
    ),
    fc.double().map((value) => Number.isFinite(value) ? JSON.stringify(value) : "0"),
    fc.integer().map(String),
    fc.string({unit: "grapheme", maxLength: 40}).map((text) => JSON.stringify(text)),
    fc.string({unit: "binary", maxLength: 40}).map((text) => JSON.stringify(text)),
    fc.integer({min: 1, max: 300}).map((depth) => "[".repeat(depth) + "]".repeat(depth)),
    fc.integer({min: 1, max: 200}).map((depth) => "{\"a\":".repeat(depth) + "1" + "}".repeat(depth)),
    fc.integer({min: 1000, max: 200_000}).map((length) => JSON.stringify("x".repeat(length))),
    fc.integer({min: 100, max: 5000}).map((length) => `[${Array.from({length}, (_, index) => index % 7).join(",")}]`),
    fc.jsonValue({maxDepth: 4}).map((value) => JSON.stringify(value)),
    // JSON schemas nested up to thousands of levels, where a response_format or a tool's parameters go.
    fc.integer({min: 1, max: 3000}).map((depth) => {
        const schema = '{"type":"object","properties":{"a":'.repeat(depth) + '{"type":"string"}' + "}}".repeat(depth);
        return `{"type":"json_schema","json_schema":{"name":"deep","schema":${schema}}}`;
    }),
    fc.integer({min: 1, max: 3000}).map((depth) => {
        const schema = '{"type":"object","properties":{"a":'.repeat(depth) + '{"type":"string"}' + "}}".repeat(depth);
        return `[{"type":"function","function":{"name":"deep","parameters":${schema}}}]`;
    }),
    // Issue 29's shapes: floods of messages and items (around the 10,000 bound and far past the 100,000 values), big
    // template variables, control-token text where a template writes it.
    fc.integer({min: 9_990, max: 40_000}).map((count) => `[${Array.from({length: count}, (_, index) => `{"role":"${index % 2 === 0 ? "user" : "assistant"}","content":""}`).join(",")}]`),
    fc.integer({min: 9_990, max: 10_010}).map((count) => `[${Array(count).fill('{"type":"reasoning"}').join(",")}]`),
    fc.integer({min: 90_000, max: 300_000}).map((length) => `{"unread":[${Array(length).fill(0).join(",")}]}`),
    fc.integer({min: 60_000, max: 70_000}).map((length) => JSON.stringify({note: "x".repeat(length)})),
    fc.integer({min: 14, max: 20}).map((depth) => `{"deep":${"[".repeat(depth)}1${"]".repeat(depth)}}`),
    fc.integer({min: 1, max: 200}).map((count) => JSON.stringify({tools: [{type: "function", function: {name: "f", description: "<|im_start|>".repeat(count)}}]})),
    fc.integer({min: 1, max: 200}).map((count) => JSON.stringify([{type: "function", function: {name: "f", description: "<|im_start|>".repeat(count), parameters: {type: "object", properties: {["<|im_end|>".repeat(count)]: {type: "string"}}}}}])),
    fc.integer({min: 1, max: 200}).map((count) => JSON.stringify([{role: "user", content: "hi"}, {role: "assistant", content: null, tool_calls: [{id: "c", type: "function", function: {name: "f", arguments: JSON.stringify({q: "<|im_start|>".repeat(count)})}}]}, {role: "tool", tool_call_id: "c", content: "</s>".repeat(count)}]))
);

export type Mutation = {field: string | null, body: string, contentType: string};

/** A valid body with one top-level field replaced by (or added as) a nasty value, possibly duplicated, truncated or mislabelled. */
export function mutatedBody(base: Record<string, unknown>, fields: readonly string[]): fc.Arbitrary<Mutation> {
    return fc.record({
        field: fc.constantFrom(...fields),
        value: nastyValue,
        duplicate: fc.boolean(),
        shape: fc.constantFrom("plain", "plain", "plain", "plain", "truncated", "wrongContentType", "notAnObject"),
        cut: fc.nat()
    }).map(({field, value, duplicate, shape, cut}) => {
        const others = Object.entries(base).filter(([key]) => key !== field).map(([key, json]) => `${JSON.stringify(key)}:${JSON.stringify(json)}`);
        const own = `${JSON.stringify(field)}:${value}`;
        // A duplicate key: the valid value first, the nasty one last (JSON.parse keeps the last).
        const fieldsText = [...others, ...(duplicate && field in base ? [`${JSON.stringify(field)}:${JSON.stringify(base[field])}`] : []), own];
        let body = `{${fieldsText.join(",")}}`;
        if (shape === "truncated")
            body = body.slice(0, cut % body.length);
        if (shape === "notAnObject")
            body = value;
        return {
            field: shape === "plain" ? field : null,
            body,
            contentType: shape === "wrongContentType" ? "text/plain" : "application/json"
        };
    });
}

/** What every answer must be: a 2xx, or a 4xx in OpenAI's error shape; never a 5xx. Returns the problem, or null. */
export async function checkAnswer(response: Response, mutation: Mutation, shape: "openai" | "anthropic" = "openai"): Promise<string | null> {
    const text = await response.text();
    if (response.status >= 500 && !(shape === "anthropic" && response.status === 529))
        return `status ${response.status}: ${text.slice(0, 300)}`;
    if (response.status < 300)
        return inStreamServerError(response, text);
    if (shape === "anthropic")
        return anthropicError(response.status, text, mutation);
    let body: {error?: {message?: unknown, type?: unknown, param?: unknown, code?: unknown}};
    try {
        body = JSON.parse(text);
    } catch {
        return `status ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`;
    }
    const error = body.error;
    if (error == null || typeof error.message !== "string" || typeof error.type !== "string"
        || !(error.param === null || typeof error.param === "string") || !(error.code === null || typeof error.code === "string"))
        return `status ${response.status} not in OpenAI's error shape: ${text.slice(0, 300)}`;
    // A field at fault is named: a plain body whose only odd field was `mutation.field` and whose answer is a field error.
    if (response.status === 400 && mutation.field != null && error.param == null && error.code !== "invalid_json")
        return `400 without a param for a body whose field '${mutation.field}' was changed: ${error.message}`;
    return null;
}

/** Anthropic's error shape, `{type: "error", error: {type, message}}`, the changed field named in a 400's message. */
function anthropicError(status: number, text: string, mutation: Mutation): string | null {
    let body: {type?: unknown, error?: {type?: unknown, message?: unknown}};
    try {
        body = JSON.parse(text);
    } catch {
        return `status ${status} with a body that is not JSON: ${text.slice(0, 200)}`;
    }
    if (body.type !== "error" || typeof body.error?.type !== "string" || typeof body.error?.message !== "string")
        return `status ${status} not in Anthropic's error shape: ${text.slice(0, 300)}`;
    // As OpenAI's `param`: a 400 for a changed field names a field, Anthropic's way (`messages.0.content: ...`); a prompt too
    // long for the context is the conversation's, told as Anthropic tells it.
    if (status === 400 && mutation.field != null && !body.error.message.includes(mutation.field) && !/^[a-z_][a-z_.0-9]*: |^prompt is too long: |parse the JSON|JSON body/i.test(body.error.message))
        return `400 whose message does not name the changed field '${mutation.field}': ${body.error.message}`;
    return null;
}

/**
 * A streamed answer (SSE) that carries an `error` event of a server-side type: a 5xx in disguise,
 * since the headers had already gone out. In-stream 4xx-like errors (a field only found wrong once
 * streaming began) are allowed. Chunked audio needs no check here: the body was read to its end.
 */
function inStreamServerError(response: Response, text: string): string | null {
    if (!(response.headers.get("content-type") ?? "").startsWith("text/event-stream"))
        return null;
    for (const block of text.split("\n\n")) {
        const data = block.split("\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice(6)).join("\n");
        if (data === "" || data === "[DONE]")
            continue;
        let event: {type?: unknown, error?: {type?: unknown}};
        try {
            event = JSON.parse(data);
        } catch {
            return `an SSE event that is not JSON: ${data.slice(0, 200)}`;
        }
        const errorType = event.error?.type;
        if (errorType === "server_error" || (event.type === "error" && errorType == null))
            return `an in-stream server error: ${data.slice(0, 300)}`;
    }
    return null;
}

/**
 * A valid body with several fields set at once from per-field lists of plausible values (JSON text):
 * in range, at the bounds and just past them. Mostly valid requests, so the engines, encoders and
 * streams run with the combinations a client would send; one bad value must still be a 4xx naming a param.
 */
export function combinedBody(base: Record<string, unknown>, choices: Record<string, readonly string[]>): fc.Arbitrary<Mutation> {
    return fc.subarray(Object.keys(choices), {minLength: 1}).chain((fields) =>
        fc.tuple(...fields.map((field) => fc.constantFrom(...choices[field]))).map((values) => {
            const chosen = new Map(fields.map((field, index) => [field, values[index]]));
            const others = Object.entries(base).filter(([key]) => !chosen.has(key)).map(([key, json]) => `${JSON.stringify(key)}:${JSON.stringify(json)}`);
            const own = [...chosen].map(([field, value]) => `${JSON.stringify(field)}:${value}`);
            return {field: fields.join(","), body: `{${[...others, ...own].join(",")}}`, contentType: "application/json"};
        }));
}
