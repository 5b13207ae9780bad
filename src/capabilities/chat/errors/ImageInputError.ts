/**
 * An image of a request its model cannot take (past the pixel limit, or not decodable): `source` is the chat request's
 * part (`messages[0].content[1]`), which each format turns into the field its client sent.
 */
export class ImageInputError extends Error {
    constructor(readonly source: string, readonly reason: "pixels" | "undecodable", message: string) {
        super(message);
        this.name = "ImageInputError";
    }
}
