import { randomInt } from "node:crypto";
import OpusScript from "opusscript";
import type { AudioEncoder } from "./AudioEncoder.js";
import { concatBytes } from "./concatBytes.js";
import { createRateStage } from "./createRateStage.js";
import { OggPageWriter, oggFlags } from "./OggPageWriter.js";
import { opusHeaders } from "./opusHeaders.js";
import { concatSamples } from "./concatSamples.js";
import { toPcm16Bytes } from "./toPcm16Bytes.js";

/** Rates libopus accepts as input; others are resampled to 48 kHz, the rate Opus always decodes to. */
const opusRates = [8000, 12_000, 16_000, 24_000, 48_000] as const;
type OpusRate = typeof opusRates[number];
const bitrate = 32_000;
/** Packets per page at most: one page per second of audio keeps Ogg's overhead under 1 %. */
const packetsPerPage = 50;
/** Ogg Opus counts granules at 48 kHz whatever the input rate (RFC 7845 §4). */
const granuleRate = 48_000;
const opusGetLookaheadRequest = 4027;

/**
 * Opus (libopus via opusscript's WebAssembly build) in Ogg: 20 ms packets, OpusHead's pre-skip = the encoder's lookahead,
 * the last page marked end-of-stream with a granule that trims the final frame's padding.
 * Each push's packets go out as pages immediately, except the newest packet, held back so that the end-of-stream page
 * always has a packet to carry the trimming granule.
 */
export function createOpusEncoder(inputSampleRate: number): AudioEncoder {
    const sampleRate: OpusRate = (opusRates as readonly number[]).includes(inputSampleRate) ? inputSampleRate as OpusRate : 48_000;
    const rate = createRateStage(inputSampleRate, sampleRate);
    const opus = new OpusScript(sampleRate, 1, OpusScript.Application.AUDIO);
    const lookahead = encoderLookahead(opus, sampleRate);
    opus.setBitrate(bitrate);
    const frameSize = sampleRate / 50;
    const granulesPerSample = granuleRate / sampleRate;
    const preSkip = lookahead * granulesPerSample;
    const ogg = new OggPageWriter(randomInt(2 ** 32));

    let headersSent = false;
    let pending = new Float32Array(0);
    let inputSamples = 0;
    let packetsEncoded = 0;
    let heldPacket: Uint8Array | undefined;

    const headers = () => {
        if (headersSent) return [];
        headersSent = true;
        const {head, tags} = opusHeaders(preSkip, inputSampleRate, "libopus 1.4 (opusscript)");
        return [ogg.page([head], 0n, oggFlags.beginOfStream), ogg.page([tags], 0n)];
    };
    const encodeFrames = (samples: Float32Array): Uint8Array[] => {
        const joined = concatSamples(pending, samples);
        const packets: Uint8Array[] = [];
        let at = 0;
        for (; at + frameSize <= joined.length; at += frameSize) {
            const pcm = toPcm16Bytes(joined.subarray(at, at + frameSize));
            packets.push(Uint8Array.from(opus.encode(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.length), frameSize)));
        }
        pending = joined.slice(at);
        packetsEncoded += packets.length;
        return packets;
    };
    /** Pages for packets whose last one ends at packet number `lastPacket`, with the last page's granule optionally overridden. */
    const pages = (packets: Uint8Array[], lastPacket: number, finalGranule?: bigint): Uint8Array[] => {
        const out: Uint8Array[] = [];
        for (let start = 0; start < packets.length; start += packetsPerPage) {
            const group = packets.slice(start, start + packetsPerPage);
            const endPacket = lastPacket - (packets.length - start - group.length);
            const isLast = start + packetsPerPage >= packets.length;
            const granule = isLast && finalGranule !== undefined ? finalGranule : BigInt(endPacket * frameSize * granulesPerSample);
            out.push(ogg.page(group, granule, isLast && finalGranule !== undefined ? oggFlags.endOfStream : 0));
        }
        return out;
    };

    return {
        contentType: "audio/ogg",
        sampleRate,
        async push(samples) {
            const resampled = rate.push(samples);
            inputSamples += resampled.length;
            const packets = encodeFrames(resampled);
            if (heldPacket) packets.unshift(heldPacket);
            heldPacket = packets.pop();
            const readyThrough = packetsEncoded - (heldPacket ? 1 : 0);
            return concatBytes([...headers(), ...pages(packets, readyThrough)]);
        },
        async end() {
            const tail = rate.end();
            inputSamples += tail.length;
            // Pad with silence until every real sample, delayed by the encoder's lookahead, has come out in a packet;
            // the padding is always at least the lookahead, so this also completes the partial frame in `pending`.
            const neededPackets = Math.ceil((inputSamples + lookahead) / frameSize);
            const padding = neededPackets * frameSize - inputSamples;
            const packets = encodeFrames(concatSamples(tail, new Float32Array(padding)));
            if (heldPacket) packets.unshift(heldPacket);
            opus.delete();
            const finalGranule = BigInt(preSkip + inputSamples * granulesPerSample);
            return concatBytes([...headers(), ...pages(packets, packetsEncoded, finalGranule)]);
        }
    };
}

/**
 * The encoder's algorithmic delay in samples at its own rate, asked of libopus (OPUS_GET_LOOKAHEAD) rather than assumed.
 * opusscript only forwards integer arguments, so the out-pointer is the start of its own input scratch buffer in the
 * WebAssembly heap, read back right away.
 */
function encoderLookahead(opus: OpusScript, sampleRate: number): number {
    const scratch = (opus as unknown as {inPCM: Uint16Array}).inPCM;
    opus.encoderCTL(opusGetLookaheadRequest, scratch.byteOffset);
    const lookahead = new DataView(scratch.buffer, scratch.byteOffset, 4).getInt32(0, true);
    if (!(lookahead > 0 && lookahead < sampleRate / 10)) throw new Error(`libopus reported an implausible lookahead: ${lookahead}`);
    return lookahead;
}
