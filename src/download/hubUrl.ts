/**
 * `<endpoint>/<owner>/<name>/resolve/<revision>/<path>`, the hub's download URL (also served by
 * mirrors that honour HF_ENDPOINT). Each segment is percent-encoded; the slashes between stay.
 */
export function hubUrl(endpoint: string, repo: string, revision: string, filePath: string): string {
    const encode = (value: string) => value.split("/").map(encodeURIComponent).join("/");
    return `${endpoint.replace(/\/+$/, "")}/${encode(repo)}/resolve/${encodeURIComponent(revision)}/${encode(filePath)}`;
}
