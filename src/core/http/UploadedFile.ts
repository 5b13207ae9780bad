/** One file of a multipart request body, held in memory (never written to disk). */
export type UploadedFile = {
    /** The form field it came in (`file` for OpenAI's audio endpoints). */
    field: string;
    /** The client's file name, if it sent one. */
    name: string | null;
    /** The part's Content-Type, if it sent one. */
    mimeType: string | null;
    /**
     * The file's bytes in the pieces they arrived in (views into the body's chunks): joined where they are used, off
     * the main thread (see ownedPieces).
     */
    parts: Uint8Array[];
    /** Its length in bytes. */
    size: number;
};
