import { Writable } from "node:stream";
import type { Middleware } from "koa";
import formidable, { errors as formidableErrors } from "formidable";
import { ApiError } from "./ApiError.js";
import { declaredLength, type BodyMemory } from "./BodyMemory.js";
import { continueBody } from "./continueBody.js";
import type { RequestState } from "./RequestState.js";
import type { UploadedFile } from "./UploadedFile.js";
import { formatLimit } from "./formatLimit.js";

export type MultipartLimits = {
    /** Largest single file, and all files together (OpenAI's audio endpoints: 25 MB). */
    maxFileBytes: number;
    /** How many files one request may carry. */
    maxFiles: number;
    /** How many plain fields, and their bytes together. */
    maxFields: number;
    maxFieldsBytes: number;
};

/**
 * `multipart/form-data` request bodies (file uploads). Files are kept in memory, bounded by the
 * limits, and never touch the disk: there is no temporary file to remove after the request or
 * after a client that went away mid-upload. Plain fields become `ctx.request.body` (a field sent
 * more than once: its last value, as OpenAI reads them; `timestamp_granularities[]` style arrays:
 * every value), files `ctx.state.files`. Another media type is a 415; a body past a size limit a 413
 * naming it; more files than `maxFiles`, or a body that does not parse, a 400. The files' bytes are counted in `memory` while they
 * are held (a 503 when they do not fit, before any is read when the Content-Length says so; the form
 * fields, at most `maxFieldsBytes`, are not counted).
 */
export function multipartBody(limits: MultipartLimits, memory: BodyMemory): Middleware {
    return async (ctx, next) => {
        const contentType = ctx.get("Content-Type");
        if (contentType.split(";")[0].trim().toLowerCase() !== "multipart/form-data")
            throw new ApiError(415, "invalid_request_error",
                `Unsupported Content-Type ${contentType ? `'${contentType}'` : "(none)"}: send the request as 'multipart/form-data'.`,
                {code: "unsupported_media_type"});
        // Files and fields together, plus room for the parts' boundaries and headers: a body declared larger is refused
        // from its Content-Length, before any of it is read.
        if (declaredLength(ctx.req) > limits.maxFileBytes + limits.maxFieldsBytes + multipartOverheadBytes)
            throw fileTooLarge(limits);
        const hold = memory.admit(ctx.req, ctx.res);
        continueBody(ctx.req, ctx.res);
        const chunks = new Map<object, Buffer[]>();
        // A chunk that does not fit (BodyMemory's 503): the parse fails at once, and whatever else arrives is dropped.
        // (Erroring the write stream instead would reach the parser a tick later, after it may have finished.)
        let refusal: unknown = null;
        const form = formidable({
            maxFiles: limits.maxFiles,
            maxFileSize: limits.maxFileBytes,
            maxTotalFileSize: limits.maxFileBytes,
            maxFields: limits.maxFields,
            maxFieldsSize: limits.maxFieldsBytes,
            allowEmptyFiles: true,
            minFileSize: 0,
            // In memory: each file's bytes are collected as they arrive (the limits bound them).
            fileWriteStreamHandler: (file) => {
                const parts: Buffer[] = [];
                chunks.set(file as object, parts);
                return new Writable({
                    write(chunk: Buffer, _encoding, callback) {
                        if (refusal == null) {
                            try {
                                hold.add(chunk.length);
                                parts.push(chunk);
                            } catch (error) {
                                refusal = error;
                                form.emit("error", error);
                            }
                        }
                        callback();
                    }
                });
            }
        });
        let parsed: [formidable.Fields, formidable.Files];
        try {
            parsed = await form.parse(ctx.req);
            if (refusal != null)
                throw refusal;
        } catch (error) {
            throw toMultipartError(error as {code?: number, httpCode?: number}, limits);
        } finally {
            (ctx.state as RequestState).logFields.body_bytes = hold.total;
        }
        const [fields, files] = parsed;
        const body: Record<string, string | string[]> = {};
        for (const [name, values] of Object.entries(fields)) {
            if (values == null || values.length === 0)
                continue;
            body[name] = name.endsWith("[]") ? values : values[values.length - 1];
        }
        const uploaded: UploadedFile[] = Object.entries(files).flatMap(([field, list]) => (list ?? []).map((file) => {
            const parts = chunks.get(file as object) ?? [];
            return {field, name: file.originalFilename ?? null, mimeType: file.mimetype ?? null, parts, size: parts.reduce((sum, part) => sum + part.length, 0)};
        }));
        ctx.request.body = body;
        ctx.state.files = uploaded;
        return next();
    };
}

/** Boundaries and part headers a declared length may add to the files and fields (generous: a part's head is ~200 bytes). */
const multipartOverheadBytes = 64 * 1024;

function fileTooLarge(limits: MultipartLimits) {
    return new ApiError(413, "invalid_request_error", `The uploaded file is larger than the server's limit of ${formatLimit(limits.maxFileBytes)}.`,
        {param: "file", code: "request_too_large"});
}

function toMultipartError(error: {code?: number, httpCode?: number, message?: string}, limits: MultipartLimits) {
    if (error instanceof ApiError)
        return error;
    switch (error.code) {
        case formidableErrors.biggerThanMaxFileSize:
        case formidableErrors.biggerThanTotalMaxFileSize:
            return fileTooLarge(limits);
        case formidableErrors.maxFilesExceeded:
            // A form with one file part too many is a bad request, not a large one (a 413 said "too large" of a 2-byte upload).
            return ApiError.invalidRequest(limits.maxFiles === 1
                ? "The request carries more than one file: upload one 'file' per request."
                : `The request carries more than ${limits.maxFiles} files: upload at most ${limits.maxFiles} per request.`, "file");
        case formidableErrors.maxFieldsExceeded:
        case formidableErrors.maxFieldsSizeExceeded:
            return new ApiError(413, "invalid_request_error",
                `The request's form fields are past the server's limit (${limits.maxFields} fields, ${formatLimit(limits.maxFieldsBytes)}).`, {code: "request_too_large"});
        default:
            return ApiError.invalidRequest("We could not parse the multipart/form-data body of your request.", null, "invalid_multipart");
    }
}
