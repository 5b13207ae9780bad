declare module "parse-prometheus-text-format" {
    export type PrometheusSample = {
        value?: string;
        labels?: Record<string, string>;
        buckets?: Record<string, string>;
        count?: string;
        sum?: string;
    };
    export type PrometheusFamily = {name: string, help: string, type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED", metrics: PrometheusSample[]};
    export default function parsePrometheusTextFormat(text: string): PrometheusFamily[];
}
