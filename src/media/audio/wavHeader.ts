/** RIFF and data sizes meaning "unknown length, read to the end", as OpenAI's streamed WAV sends them. */
const unknownWavSize = 0xFFFFFFFF;

/**
 * The 44-byte canonical header of a mono 16-bit PCM WAV file.
 * dataBytes undefined: a streaming header with unknown sizes.
 */
export function wavHeader(sampleRate: number, dataBytes?: number): Uint8Array {
    const header = new Uint8Array(44);
    const view = new DataView(header.buffer);
    const ascii = (offset: number, text: string) => {
        for (let i = 0; i < text.length; i++) header[offset + i] = text.charCodeAt(i);
    };
    const channels = 1;
    const bytesPerSample = 2;
    ascii(0, "RIFF");
    view.setUint32(4, dataBytes === undefined ? unknownWavSize : 36 + dataBytes, true);
    ascii(8, "WAVE");
    ascii(12, "fmt ");
    view.setUint32(16, 16, true);
    view.setUint16(20, 1, true); // PCM
    view.setUint16(22, channels, true);
    view.setUint32(24, sampleRate, true);
    view.setUint32(28, sampleRate * channels * bytesPerSample, true);
    view.setUint16(32, channels * bytesPerSample, true);
    view.setUint16(34, 8 * bytesPerSample, true);
    ascii(36, "data");
    view.setUint32(40, dataBytes === undefined ? unknownWavSize : dataBytes, true);
    return header;
}
