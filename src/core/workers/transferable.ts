import { Piscina } from "piscina";

/**
 * Marks a task's result so that `buffers` are moved to the main thread instead of copied (a decoded
 * image, a second of audio). Only for buffers the worker will not touch again: never a cached model's.
 * Return it as the task's whole result, not nested inside another object (piscina's rule).
 */
export function transferable<T>(value: T, buffers: ArrayBuffer[]): T {
    const wrapped = {
        get [Piscina.transferableSymbol]() {
            return buffers;
        },
        get [Piscina.valueSymbol]() {
            return value;
        }
    };
    return Piscina.move(wrapped as never) as unknown as T;
}
