/** Why: the base64, the bytes not the type said (`format`), the pixel limit, or a file that does not decode. */
export type DecodeRefusal = "base64" | "format" | "pixels" | "undecodable";

/**
 * An image of a request its model cannot take (bad base64, not the type said, past the pixel limit, not decodable):
 * `source` is the chat request's part (`messages[0].content[1]`), which each format turns into the field its client sent.
 */
export class ImageInputError extends Error {
    constructor(readonly source: string, readonly reason: DecodeRefusal, message: string) {
        super(message);
        this.name = "ImageInputError";
    }
}
