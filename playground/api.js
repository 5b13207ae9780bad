// @ts-check
/** The server's API as the page uses it: one fetch wrapper (key, errors, busy retries) and an SSE reader. */

const keyName = "playground.apiKey";

/** The key the person typed, kept for this tab only (sessionStorage); "" when none. */
export function apiKey() {
    return sessionStorage.getItem(keyName) ?? "";
}

/** @param {string} key */
export function setApiKey(key) {
    if (key === "")
        sessionStorage.removeItem(keyName);
    else
        sessionStorage.setItem(keyName, key);
}

/** An error answer, with the API's own message (never a stack). */
export class ApiError extends Error {
    /**
     * @param {number} status
     * @param {string} message
     * @param {string | null} param
     */
    constructor(status, message, param) {
        super(message);
        this.status = status;
        this.param = param;
    }
}

/**
 * @param {Response} response
 * @returns {Promise<ApiError>}
 */
async function errorOf(response) {
    let message = `${response.status} ${response.statusText}`;
    let param = null;
    try {
        const body = await response.json();
        const error = body?.error;
        if (typeof error?.message === "string")
            message = error.message;
        if (typeof error?.param === "string")
            param = error.param;
    } catch {
        // not JSON: the status line says it
    }
    return new ApiError(response.status, message, param);
}

/**
 * Calls the API. A 503 with Retry-After ("busy") is retried after that many seconds, saying so through
 * `onBusy`; any other error answer throws an ApiError with the server's message. `model`: the model the request
 * names; when it is not loaded (the request waits for its load), `onWait` gets `loading <model>…` until the answer
 * begins (a streamed answer's headers come once the model is ready), then "".
 * @param {string} path
 * @param {{method?: string, body?: unknown, signal?: AbortSignal, onBusy?: (seconds: number) => void, model?: string, onWait?: (note: string) => void}} [options]
 * @returns {Promise<Response>}
 */
export async function call(path, options = {}) {
    const answered = options.model != null && options.onWait != null ? watchLoad(options.model, options.onWait) : null;
    try {
        return await send(path, options);
    } finally {
        answered?.();
    }
}

/**
 * Asks for the model's status beside the request that names it: when the request has no answer yet and the model
 * is not loaded, `show` says it is loading. Returns what to call once the answer begins (or failed).
 * @param {string} model
 * @param {(note: string) => void} show
 */
function watchLoad(model, show) {
    let answered = false;
    let shown = false;
    void send(`/v1/models/${encodeURIComponent(model)}`, {}).then((response) => response.json()).then((/** @type {{status?: {value?: string}}} */ object) => {
        if (answered || object.status?.value === "loaded")
            return;
        shown = true;
        show(`loading ${model}…`);
    }, () => {
        // No status (an older server, a network error): the request itself says what happened.
    });
    return () => {
        answered = true;
        if (shown)
            show("");
    };
}

/**
 * @param {string} path
 * @param {{method?: string, body?: unknown, signal?: AbortSignal, onBusy?: (seconds: number) => void}} options
 * @returns {Promise<Response>}
 */
async function send(path, options) {
    for (let attempt = 0; ; attempt++) {
        /** @type {Record<string, string>} */
        const headers = {};
        const key = apiKey();
        if (key !== "")
            headers.Authorization = `Bearer ${key}`;
        // A form (a file upload) goes as multipart, with the browser's own boundary; anything else as JSON.
        const form = options.body instanceof FormData ? options.body : null;
        if (options.body !== undefined && form == null)
            headers["Content-Type"] = "application/json";
        const response = await fetch(path, {
            method: options.method ?? (options.body === undefined ? "GET" : "POST"), headers, signal: options.signal,
            body: options.body === undefined ? undefined : form ?? JSON.stringify(options.body)
        });
        if (response.ok)
            return response;
        const retryAfter = Number(response.headers.get("Retry-After"));
        if (response.status === 503 && Number.isFinite(retryAfter) && retryAfter > 0 && attempt < 5) {
            await response.body?.cancel();
            options.onBusy?.(retryAfter);
            await new Promise((resolve, reject) => {
                const timer = setTimeout(resolve, retryAfter * 1000);
                options.signal?.addEventListener("abort", () => {
                    clearTimeout(timer);
                    reject(options.signal?.reason);
                }, {once: true});
            });
            continue;
        }
        throw await errorOf(response);
    }
}

/**
 * The events of a server-sent-events answer, as they arrive.
 * @param {Response} response
 * @returns {AsyncGenerator<{event: string, data: string}>}
 */
async function* events(response) {
    if (response.body == null)
        return;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
        const {done, value} = await reader.read();
        if (done)
            break;
        buffer += value;
        let end;
        while ((end = buffer.search(/\r?\n\r?\n/)) !== -1) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, "");
            let event = "message";
            const data = [];
            for (const line of block.split(/\r?\n/)) {
                if (line.startsWith("event:"))
                    event = line.slice(6).trim();
                else if (line.startsWith("data:"))
                    data.push(line.slice(5).replace(/^ /, ""));
            }
            if (data.length > 0)
                yield {event, data: data.join("\n")};
        }
    }
}

/**
 * A stream's JSON events, parsed, each with its kind (the payload's `type`, else the SSE event name), until
 * `[DONE]` or the end. A failed stream sends its error as an event: thrown as an ApiError with its message.
 * @param {Response} response
 * @returns {AsyncGenerator<{kind: string, message: any}>}
 */
export async function* streamMessages(response) {
    for await (const {event, data} of events(response)) {
        if (data === "[DONE]")
            return;
        const message = JSON.parse(data);
        if (typeof message?.error?.message === "string")
            throw new ApiError(500, message.error.message, null);
        yield {kind: message.type ?? event, message};
    }
}

/**
 * An element with text and attributes; text always as text (never parsed as HTML).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, string>} [attributes]
 * @param {(Node | string)[]} [children]
 * @returns {HTMLElementTagNameMap[K]}
 */
export function element(tag, attributes = {}, children = []) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes))
        node.setAttribute(name, value);
    node.append(...children);
    return node;
}

/**
 * A model picker's options: every model given (loaded or not; the first request loads it), aliases shown.
 * @param {{id: string, aliases: string[]}[]} models
 */
export function modelOptions(models) {
    return models.map((m) => element("option", {value: m.id}, [m.aliases.length > 0 ? `${m.id} (${m.aliases.join(", ")})` : m.id]));
}

/**
 * A labelled form field.
 * @param {string} text
 * @param {HTMLElement} field
 */
export function labelled(text, field) {
    return element("label", {}, [text, field]);
}
