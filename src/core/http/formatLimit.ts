/** A byte count as a limit is read: "25 MB", "512 KB", "100 bytes" (1 MB = 1024 * 1024 bytes). */
export function formatLimit(bytes: number): string {
    if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0)
        return `${bytes / (1024 * 1024)} MB`;
    if (bytes >= 1024 && bytes % 1024 === 0)
        return `${bytes / 1024} KB`;
    return `${bytes} bytes`;
}
