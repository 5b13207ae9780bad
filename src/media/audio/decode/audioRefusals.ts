/** Bytes no decoder here can read (unknown container, corrupt data, no audio): the message says which. */
export class UndecodableAudioError extends Error {}

/** Audio longer than the limit (`--max-audio-seconds`): refused before decoding when the header says so, else as soon as the decoded audio passes it. */
export class AudioTooLongError extends Error {
    constructor(readonly maxSeconds: number, declaredSeconds: number | null) {
        super(declaredSeconds != null
            ? `The audio is ${Number(declaredSeconds.toFixed(2))} s long, longer than the limit of ${maxSeconds} s.`
            : `The audio is longer than the limit of ${maxSeconds} s.`);
    }
}

/** Lowest and highest sample rates accepted: below telephone speech, or past the fastest converters, a rate is a forged header. */
const minSampleRate = 8_000;
const maxSampleRate = 384_000;

/** A sample rate outside minSampleRate..maxSampleRate. */
export class SampleRateError extends Error {
    constructor(readonly sampleRate: number) {
        super(`The audio's sample rate of ${sampleRate} Hz is outside the ${minSampleRate}-${maxSampleRate} Hz accepted.`);
    }
}

/** Refuses a rate outside the accepted range (SampleRateError) or no rate at all (UndecodableAudioError). */
export function checkSampleRate(sampleRate: number, format: string) {
    if (!(sampleRate > 0))
        throw new UndecodableAudioError(`The ${format} file declares no sample rate.`);
    if (sampleRate < minSampleRate || sampleRate > maxSampleRate)
        throw new SampleRateError(sampleRate);
}
