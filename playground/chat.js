// @ts-check
import { call, element, labelled, modelOptions, streamMessages } from "./api.js";
import { imageAttachments, thumbnail } from "./chatImages.js";
import { markdownView } from "./markdownStream.js";

/** @typedef {import("./models.js").Model} Model */
/** @typedef {{type: "text", text: string} | {type: "image_url", image_url: {url: string}}} Part */
/** @typedef {{role: "system" | "user" | "assistant", content: string | Part[]}} Turn */

const storageKey = "playground.chat";

/**
 * The chat tab: a streamed conversation kept in the page (and, when asked, in localStorage), its answer as
 * Markdown, a thinking model's reasoning in a fold, a stop button, the sampling fields, JSON mode, and per
 * answer the time to the first token and the tokens per second read from the stream. A model that takes images
 * (`architecture.input_modalities` in the list) gets them attached to a message (chatImages.js), sent as `image_url`
 * parts with data URLs.
 * @param {HTMLElement} root
 * @param {Model[]} models
 */
export function mountChat(root, models) {
    const model = element("select", {name: "model"}, modelOptions(models));
    const system = element("textarea", {name: "system", placeholder: "System prompt (optional)", rows: "2"});
    const temperature = element("input", {name: "temperature", type: "number", min: "0", max: "2", step: "0.1", value: "0.7"});
    const topP = element("input", {name: "top_p", type: "number", min: "0", max: "1", step: "0.05", value: "1"});
    const maxTokens = element("input", {name: "max_tokens", type: "number", min: "1", value: "256"});
    const seed = element("input", {name: "seed", type: "number", placeholder: "random"});
    const json = element("input", {name: "json", type: "checkbox"});
    const keep = element("input", {name: "keep", type: "checkbox"});
    const prompt = element("textarea", {name: "prompt", placeholder: "Message", rows: "3"});
    const send = element("button", {type: "submit"}, ["Send"]);
    const stop = element("button", {type: "button", class: "secondary", disabled: ""}, ["Stop"]);
    const clear = element("button", {type: "button", class: "secondary"}, ["Clear"]);
    const messages = element("div", {class: "messages", "aria-live": "polite"});
    const error = element("p", {class: "error", role: "alert"});
    const form = element("form", {class: "card"}, [
        element("div", {class: "row"}, [labelled("Model", model), labelled("Temperature", temperature), labelled("top_p", topP), labelled("Max tokens", maxTokens), labelled("Seed", seed),
            element("label", {class: "inline"}, [json, " JSON mode"]), element("label", {class: "inline"}, [keep, " keep in this browser"])]),
        system
    ]);
    const composer = element("form", {class: "card"}, [prompt]);
    const images = imageAttachments(composer, (message) => error.textContent = message);
    composer.append(images.tray, images.input, element("div", {class: "row"}, [send, stop, clear, images.button]));
    root.append(form, element("div", {class: "card"}, [messages, error]), composer);
    // The attach button follows the chosen model, and the list when a fresh one replaces the picker's options.
    const offerImages = () => {
        const chosen = models.find((entry) => entry.id === model.value);
        images.allow(chosen?.architecture?.input_modalities.includes("image") === true ? null : `The model ${model.value} does not take images`);
    };
    model.addEventListener("change", offerImages);
    new MutationObserver(offerImages).observe(model, {childList: true});
    offerImages();

    /** @type {Turn[]} */
    let conversation = [];
    try {
        conversation = JSON.parse(localStorage.getItem(storageKey) ?? "[]");
        keep.checked = conversation.length > 0;
    } catch {
        conversation = [];
    }
    const save = () => {
        try {
            if (keep.checked)
                localStorage.setItem(storageKey, JSON.stringify(conversation));
            else
                localStorage.removeItem(storageKey);
        } catch {
            error.textContent = "This conversation is too large to keep in this browser (its images).";
        }
    };
    keep.addEventListener("change", save);
    for (const turn of conversation)
        messages.append(turn.role === "user" ? userMessage(turn.content) : assistantMessage().showAnswer(String(turn.content)).node);

    /** @type {AbortController | null} */
    let running = null;
    stop.addEventListener("click", () => running?.abort());
    clear.addEventListener("click", () => {
        conversation = [];
        messages.replaceChildren();
        save();
    });
    composer.addEventListener("submit", async (event) => {
        event.preventDefault();
        const text = prompt.value.trim();
        if (running != null || (text === "" && images.tray.childElementCount === 0))
            return;
        error.textContent = "";
        prompt.value = "";
        const attached = images.take();
        /** @type {Turn} */
        const turn = {role: "user", content: attached.length === 0 ? text : [
            ...attached.map((url) => /** @type {Part} */ ({type: "image_url", image_url: {url}})),
            ...(text === "" ? [] : [/** @type {Part} */ ({type: "text", text})])
        ]};
        conversation.push(turn);
        messages.append(userMessage(turn.content));
        const answer = assistantMessage();
        messages.append(answer.node);
        running = new AbortController();
        send.disabled = true;
        stop.disabled = false;
        const started = performance.now();
        let firstToken = 0;
        let content = "";
        let reasoning = "";
        try {
            const body = {
                model: model.value, stream: true, stream_options: {include_usage: true},
                messages: [...(system.value.trim() === "" ? [] : [{role: "system", content: system.value}]), ...conversation],
                temperature: Number(temperature.value), top_p: Number(topP.value), max_tokens: Number(maxTokens.value),
                ...(seed.value === "" ? {} : {seed: Number(seed.value)}),
                ...(json.checked ? {response_format: {type: "json_object"}} : {})
            };
            const response = await call("/v1/chat/completions", {
                body, signal: running.signal, onBusy: (seconds) => answer.setNote(`busy, retrying in ${seconds} s`), model: body.model, onWait: answer.setNote
            });
            answer.setNote("");
            /** @type {{completion_tokens: number, prompt_tokens: number, completion_tokens_details?: {reasoning_tokens: number}} | null} */
            let usage = null;
            for await (const {message: chunk} of streamMessages(response)) {
                usage = chunk.usage ?? usage;
                const delta = chunk.choices?.[0]?.delta ?? {};
                if ((delta.content ?? "") !== "" || (delta.reasoning_content ?? "") !== "")
                    firstToken ||= performance.now();
                if (typeof delta.reasoning_content === "string" && delta.reasoning_content !== "") {
                    reasoning += delta.reasoning_content;
                    answer.appendReasoning(delta.reasoning_content);
                }
                if (typeof delta.content === "string" && delta.content !== "") {
                    content += delta.content;
                    answer.appendAnswer(delta.content);
                }
            }
            if (reasoning !== "")
                answer.closeReasoning();
            const ended = performance.now();
            if (usage != null) {
                const rate = firstToken > 0 && ended > firstToken ? usage.completion_tokens / ((ended - firstToken) / 1000) : 0;
                answer.setStats(`${usage.prompt_tokens} prompt + ${usage.completion_tokens} completion tokens` +
                    (usage.completion_tokens_details ? ` (${usage.completion_tokens_details.reasoning_tokens} reasoning)` : "") +
                    ` · first token ${Math.round(firstToken - started)} ms · ${rate.toFixed(1)} tokens/s`);
            }
        } catch (failure) {
            if (running.signal.aborted)
                answer.setStats("stopped");
            else
                error.textContent = failure instanceof Error ? failure.message : String(failure);
        } finally {
            answer.flush();
            conversation.push({role: "assistant", content});
            save();
            running = null;
            send.disabled = false;
            stop.disabled = true;
        }
    });
}

/**
 * A message of the person: its images as thumbnails, then its text.
 * @param {string | Part[]} content
 */
function userMessage(content) {
    if (typeof content === "string")
        return element("div", {class: "message user"}, [content]);
    const pictures = content.flatMap((part) => part.type === "image_url" ? [thumbnail(part.image_url.url)] : []);
    const text = content.flatMap((part) => part.type === "text" ? [part.text] : []).join("\n");
    return element("div", {class: "message user"}, [...(pictures.length === 0 ? [] : [element("div", {class: "attachments"}, pictures)]), text]);
}

/**
 * One answer: its reasoning (plain text, appended piece by piece, not rewritten whole) and its Markdown, rendered as
 * it streams with bounded work per piece (markdownView).
 */
function assistantMessage() {
    const reasoningText = document.createTextNode("");
    const fold = element("details", {hidden: ""}, [element("summary", {}, ["Reasoning"]), element("div", {}, [reasoningText])]);
    const body = element("div", {class: "markdown"});
    const note = element("div", {class: "muted"});
    const stats = element("div", {class: "stats"});
    const node = element("div", {class: "message assistant"}, [fold, note, body, stats]);
    const view = markdownView(body, addCopyButtons);
    const api = {
        node,
        /** @param {string} piece */
        appendReasoning(piece) {
            if (fold.hidden) {
                fold.hidden = false;
                fold.open = true;
            }
            reasoningText.appendData(piece);
        },
        closeReasoning() {
            fold.open = false;
        },
        /** @param {string} piece */
        appendAnswer(piece) {
            view.append(piece);
        },
        /** Renders what has arrived now (the stream ended, or was stopped). */
        flush() {
            view.flush();
        },
        /** @param {string} text */
        showAnswer(text) {
            view.show(text);
            return api;
        },
        /** @param {string} text */
        setNote(text) {
            note.textContent = text;
        },
        /** @param {string} text */
        setStats(text) {
            stats.textContent = text;
        }
    };
    return api;
}

/**
 * A copy button on each code block among `nodes` (code blocks are top-level blocks).
 * @param {Node[]} nodes
 */
function addCopyButtons(nodes) {
    for (const pre of nodes) {
        if (!(pre instanceof HTMLPreElement))
            continue;
        const copy = element("button", {type: "button", class: "secondary"}, ["Copy"]);
        copy.addEventListener("click", () => void navigator.clipboard?.writeText(pre.querySelector("code")?.textContent ?? ""));
        pre.prepend(copy);
    }
}
