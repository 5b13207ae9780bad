/**
 * `npx tsx bench/audioEncodeBench.ts`: time to encode 10 s of 24 kHz speech-like audio per response format, pushed in
 * 0.5 s chunks as a streamed response would be, including encoder creation (WebAssembly instantiation, AAC's worker).
 * Also resampling 10 s from 16 to 24 kHz and a 1.25x time stretch. Best of 3 runs after one warm-up (codecs loaded).
 */
import { performance } from "node:perf_hooks";
import { createAudioEncoder } from "../src/media/audio/createAudioEncoder.js";
import { resample } from "../src/media/audio/resample.js";
import { audioFormats } from "../src/media/audio/audioFormats.js";
import { timeStretch } from "../src/media/audio/timeStretch.js";

const sampleRate = 24_000;
const seconds = 10;
const audio = Float32Array.from({length: sampleRate * seconds}, (_, i) => {
    const t = i / sampleRate;
    const envelope = Math.sin(Math.PI * ((t * 4) % 1)) ** 2;
    return envelope * (0.3 * Math.sin(2 * Math.PI * 150 * t) + 0.1 * Math.sin(2 * Math.PI * 450 * t) + 0.05 * Math.sin(2 * Math.PI * 2500 * t));
});
const chunk = sampleRate / 2;

async function bestOf(runs: number, task: () => Promise<unknown> | unknown): Promise<number> {
    await task();
    let best = Infinity;
    for (let run = 0; run < runs; run++) {
        const start = performance.now();
        await task();
        best = Math.min(best, performance.now() - start);
    }
    return best;
}

const rows: {what: string; ms: string; "% of audio time": string}[] = [];
const row = (what: string, ms: number) => rows.push({what, ms: ms.toFixed(1), "% of audio time": ((ms / (seconds * 1000)) * 100).toFixed(2)});
for (const format of audioFormats) {
    row(format, await bestOf(3, async () => {
        const encoder = await createAudioEncoder(format, {inputSampleRate: sampleRate, streaming: true});
        for (let at = 0; at < audio.length; at += chunk) await encoder.push(audio.subarray(at, at + chunk));
        await encoder.end();
    }));
}
const at16k = resample(audio, 24_000, 16_000);
row("resample 16 -> 24 kHz", await bestOf(3, () => resample(at16k, 16_000, 24_000)));
row("timeStretch x1.25", await bestOf(3, () => timeStretch(audio, sampleRate, 1.25)));
console.table(rows);
