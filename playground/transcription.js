// @ts-check
import { call, element, labelled, modelOptions, streamMessages } from "./api.js";

/** @typedef {{id: string, aliases: string[]}} Model */

/**
 * The transcription tab: an audio file (wav, mp3, flac, ogg, webm) to text, or to English (translation),
 * streamed as `transcript.text.delta` events so the text appears window by window; or whole as srt, vtt or
 * verbose_json (segments with their times, and words with theirs where the model can time them), shown as the
 * server answers.
 * @param {HTMLElement} root
 * @param {Model[]} models
 */
export function mountTranscription(root, models) {
    const model = element("select", {name: "model"}, modelOptions(models));
    const file = element("input", {name: "file", type: "file", accept: "audio/*,.wav,.mp3,.flac,.ogg,.opus,.webm"});
    const task = element("select", {name: "task"}, [element("option", {value: "transcriptions"}, ["transcribe"]), element("option", {value: "translations"}, ["translate to English"])]);
    const language = element("input", {name: "language", placeholder: "auto (en)", size: "6"});
    const format = element("select", {name: "response_format"}, [
        ...["stream", "text", "srt", "vtt", "verbose_json"].map((name) => element("option", {value: name}, [name])),
        element("option", {value: "verbose_json+words"}, ["verbose_json with words"])
    ]);
    const run = element("button", {type: "submit"}, ["Transcribe"]);
    const state = element("div", {class: "muted", "data-role": "transcription-state"});
    const error = element("p", {class: "error", role: "alert"});
    const output = element("pre", {class: "transcript", "data-role": "transcript"});
    const form = element("form", {class: "card"}, [
        element("div", {class: "row"}, [labelled("Model", model), labelled("Audio file", file), labelled("Task", task), labelled("Language", language), labelled("Answer as", format)]),
        run
    ]);
    root.append(form, element("div", {class: "card"}, [state, error, output]));
    // Translations are not streamed (as OpenAI's): the stream option is off for them, the whole text instead.
    const streamOption = /** @type {HTMLOptionElement} */ (format.querySelector('option[value="stream"]'));
    task.addEventListener("change", () => {
        const translating = task.value === "translations";
        streamOption.disabled = translating;
        if (translating && format.value === "stream")
            format.value = "text";
    });

    form.addEventListener("submit", async (event) => {
        event.preventDefault();
        const audio = file.files?.[0];
        if (audio == null) {
            error.textContent = "Choose an audio file first.";
            return;
        }
        error.textContent = "";
        output.textContent = "";
        delete root.dataset.done;
        run.disabled = true;
        const started = performance.now();
        try {
            const body = new FormData();
            body.append("file", audio, audio.name);
            body.append("model", model.value);
            if (language.value.trim() !== "" && task.value === "transcriptions")
                body.append("language", language.value.trim());
            const streamed = format.value === "stream";
            const words = format.value === "verbose_json+words";
            body.append("response_format", streamed ? "json" : words ? "verbose_json" : format.value);
            if (streamed)
                body.append("stream", "true");
            if (words)
                for (const granularity of ["segment", "word"])
                    body.append("timestamp_granularities[]", granularity);
            state.textContent = "transcribing";
            const response = await call(`/v1/audio/${task.value}`, {
                body, onBusy: (seconds) => state.textContent = `busy, retrying in ${seconds} s`, model: model.value, onWait: (note) => state.textContent = note || "transcribing"
            });
            if (streamed) {
                for await (const {kind, message} of streamMessages(response)) {
                    if (kind === "transcript.text.delta")
                        output.textContent += message.delta;
                    else if (kind === "transcript.text.done")
                        output.textContent = message.text;
                }
            } else
                output.textContent = format.value.startsWith("verbose_json") ? JSON.stringify(await response.json(), null, 2) : await response.text();
            state.textContent = `done in ${((performance.now() - started) / 1000).toFixed(1)} s`;
            root.dataset.done = "true";
        } catch (failure) {
            error.textContent = failure instanceof Error ? failure.message : String(failure);
            state.textContent = "";
        } finally {
            run.disabled = false;
        }
    });
}
