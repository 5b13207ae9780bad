import http from "node:http";

export type RawResponse = {status: number, headers: http.IncomingHttpHeaders, body: string};

/** One HTTP request with node:http, which (unlike fetch) lets a test set any header, Host and Origin included. */
export function rawRequest(url: string, options: {method?: string, headers?: Record<string, string>, body?: string} = {}): Promise<RawResponse> {
    return new Promise((resolve, reject) => {
        const request = http.request(url, {method: options.method ?? "GET", headers: options.headers, agent: false}, (response) => {
            let body = "";
            response.setEncoding("utf8");
            response.on("data", (chunk) => body += chunk);
            response.on("end", () => resolve({status: response.statusCode!, headers: response.headers, body}));
        });
        request.on("error", reject);
        request.end(options.body);
    });
}
