import http from "node:http";

export type RawResponse = {status: number, headers: http.IncomingHttpHeaders, body: string};

/**
 * One HTTP request with node:http, which (unlike fetch) lets a test set any header, Host and Origin
 * included. `target`: the request target sent as it is (no normalisation of dot segments, case or
 * percent-encoding), instead of the URL's path.
 */
export function rawRequest(url: string, options: {method?: string, headers?: Record<string, string>, body?: string, target?: string} = {}): Promise<RawResponse> {
    return new Promise((resolve, reject) => {
        const parsed = new URL(url);
        const request = http.request({
            hostname: parsed.hostname.replace(/^\[|\]$/g, ""), port: parsed.port, path: options.target ?? parsed.pathname + parsed.search,
            method: options.method ?? "GET", headers: options.headers, agent: false
        }, (response) => {
            let body = "";
            response.setEncoding("utf8");
            response.on("data", (chunk) => body += chunk);
            response.on("end", () => resolve({status: response.statusCode!, headers: response.headers, body}));
        });
        request.on("error", reject);
        request.end(options.body);
    });
}
