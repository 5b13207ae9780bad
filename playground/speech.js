// @ts-check
import { call, element, labelled, modelOptions, streamMessages } from "./api.js";

/** @typedef {{id: string, aliases: string[]}} Model */

/** OpenAI's `pcm`: signed 16-bit little-endian mono at 24 kHz. */
const pcmRate = 24000;

/**
 * The speech tab. Playback starts while the audio still streams: the page asks for `stream_format: "sse"`
 * with `response_format: "pcm"` and feeds each `speech.audio.delta` to Web Audio as it arrives (chosen over
 * MediaSource, which needs a container format the browser can append; raw PCM plays in every browser, and
 * each sentence's samples arrive whole). The samples are kept to make a WAV file for the player and a
 * download; another format is fetched whole when asked for. Returns what to do when the tab is shown (the first
 * time: ask for the model's voices).
 * @param {HTMLElement} root
 * @param {Model[]} models
 */
export function mountSpeech(root, models) {
    const model = element("select", {name: "model"}, modelOptions(models));
    const voice = element("select", {name: "voice"});
    const speed = element("input", {name: "speed", type: "number", min: "0.25", max: "4", step: "0.05", value: "1"});
    const format = element("select", {name: "format"}, ["wav", "mp3", "opus", "flac", "aac", "pcm"].map((name) => element("option", {value: name}, [name])));
    const text = element("textarea", {name: "input", rows: "4"});
    text.value = "Hello! This is the speech playground. Every sentence starts playing as soon as it is ready.";
    const speak = element("button", {type: "submit"}, ["Speak"]);
    const stop = element("button", {type: "button", class: "secondary", disabled: ""}, ["Stop"]);
    const downloadAs = element("button", {type: "button", class: "secondary"}, ["Download as"]);
    const state = element("div", {class: "muted", "data-role": "speech-state"});
    const error = element("p", {class: "error", role: "alert"});
    const player = element("audio", {controls: "", hidden: ""});
    const link = element("a", {hidden: ""}, ["Download WAV"]);
    const form = element("form", {class: "card"}, [
        element("div", {class: "row"}, [labelled("Model", model), labelled("Voice", voice), labelled("Speed", speed)]),
        text, element("div", {class: "row"}, [speak, stop, downloadAs, format])
    ]);
    root.append(form, element("div", {class: "card"}, [state, error, player, " ", link]));

    const loadVoices = async () => {
        try {
            // The voices are the model's own: asking for them loads it.
            const response = await call(`/v1/audio/voices?model=${encodeURIComponent(model.value)}`, {model: model.value, onWait: (note) => state.textContent = note});
            /** @type {{data?: {id: string, name?: string}[], voices?: {id: string, name?: string}[]}} */
            const list = await response.json();
            const voices = list.data ?? list.voices ?? [];
            voice.replaceChildren(...voices.map((entry) => element("option", {value: entry.id}, [entry.name ?? entry.id])));
        } catch (failure) {
            error.textContent = failure instanceof Error ? failure.message : String(failure);
        }
    };
    model.addEventListener("change", () => void loadVoices());

    /** @type {AbortController | null} */
    let running = null;
    /** @type {AudioContext | null} */
    let audio = null;
    stop.addEventListener("click", () => {
        running?.abort();
        void audio?.close();
        audio = null;
    });

    form.addEventListener("submit", async (event) => {
        event.preventDefault();
        if (running != null)
            return;
        error.textContent = "";
        player.hidden = true;
        link.hidden = true;
        delete root.dataset.playbackStarted;
        delete root.dataset.responseEnded;
        running = new AbortController();
        speak.disabled = true;
        stop.disabled = false;
        audio = new AudioContext({sampleRate: pcmRate});
        let playAt = audio.currentTime + 0.05;
        /** @type {Int16Array[]} */
        const chunks = [];
        let carry = new Uint8Array(0);
        try {
            state.textContent = "asking";
            const response = await call("/v1/audio/speech", {
                body: {model: model.value, voice: voice.value, input: text.value, speed: Number(speed.value), response_format: "pcm", stream_format: "sse"},
                signal: running.signal, onBusy: (seconds) => state.textContent = `busy, retrying in ${seconds} s`,
                model: model.value, onWait: (note) => state.textContent = note || "asking"
            });
            for await (const {kind, message} of streamMessages(response)) {
                if (kind !== "speech.audio.delta")
                    continue;
                // Samples may straddle deltas: an odd byte waits for the next one.
                const bytes = concat(carry, Uint8Array.from(atob(message.audio), (c) => c.charCodeAt(0)));
                const whole = bytes.length - (bytes.length % 2);
                carry = bytes.slice(whole);
                const samples = new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + whole));
                if (samples.length === 0)
                    continue;
                chunks.push(samples);
                const buffer = audio.createBuffer(1, samples.length, pcmRate);
                buffer.getChannelData(0).set(Float32Array.from(samples, (sample) => sample / 32768));
                const source = audio.createBufferSource();
                source.buffer = buffer;
                source.connect(audio.destination);
                playAt = Math.max(playAt, audio.currentTime);
                source.start(playAt);
                playAt += buffer.duration;
                if (root.dataset.playbackStarted == null) {
                    root.dataset.playbackStarted = String(performance.now());
                    state.textContent = "playing (still streaming)";
                }
            }
            root.dataset.responseEnded = String(performance.now());
            const seconds = chunks.reduce((sum, chunk) => sum + chunk.length, 0) / pcmRate;
            state.textContent = `${seconds.toFixed(2)} s of audio`;
            const wav = URL.createObjectURL(toWav(chunks, pcmRate));
            player.src = wav;
            player.hidden = false;
            link.href = wav;
            link.download = "speech.wav";
            link.hidden = false;
        } catch (failure) {
            if (!running.signal.aborted)
                error.textContent = failure instanceof Error ? failure.message : String(failure);
            else
                state.textContent = "stopped";
        } finally {
            running = null;
            speak.disabled = false;
            stop.disabled = true;
        }
    });

    downloadAs.addEventListener("click", async () => {
        error.textContent = "";
        try {
            const response = await call("/v1/audio/speech", {body: {model: model.value, voice: voice.value, input: text.value, speed: Number(speed.value), response_format: format.value}});
            const url = URL.createObjectURL(await response.blob());
            const anchor = element("a", {href: url, download: `speech.${format.value}`});
            anchor.click();
            setTimeout(() => URL.revokeObjectURL(url), 60_000);
        } catch (failure) {
            error.textContent = failure instanceof Error ? failure.message : String(failure);
        }
    });

    // The voices are asked for when the tab is first shown, not when the page opens: that loads the speech model.
    let voicesAsked = false;
    return {
        shown() {
            if (!voicesAsked)
                void loadVoices();
            voicesAsked = true;
        }
    };
}

/**
 * @param {Uint8Array} a
 * @param {Uint8Array} b
 */
function concat(a, b) {
    const out = new Uint8Array(a.length + b.length);
    out.set(a);
    out.set(b, a.length);
    return out;
}

/**
 * A 16-bit mono WAV file of the samples.
 * @param {Int16Array[]} chunks
 * @param {number} rate
 */
function toWav(chunks, rate) {
    const samples = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
    const view = new DataView(new ArrayBuffer(44 + samples * 2));
    const ascii = (/** @type {number} */ at, /** @type {string} */ text) => [...text].forEach((c, i) => view.setUint8(at + i, c.charCodeAt(0)));
    ascii(0, "RIFF");
    view.setUint32(4, 36 + samples * 2, true);
    ascii(8, "WAVEfmt ");
    view.setUint32(16, 16, true);
    view.setUint16(20, 1, true);
    view.setUint16(22, 1, true);
    view.setUint32(24, rate, true);
    view.setUint32(28, rate * 2, true);
    view.setUint16(32, 2, true);
    view.setUint16(34, 16, true);
    ascii(36, "data");
    view.setUint32(40, samples * 2, true);
    let at = 44;
    for (const chunk of chunks)
        for (const sample of chunk) {
            view.setInt16(at, sample, true);
            at += 2;
        }
    return new Blob([view.buffer], {type: "audio/wav"});
}
