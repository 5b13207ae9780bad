import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments, parse as parseYaml } from "yaml";
import { loadConfig } from "../../src/config.js";

// deploy/: the Kubernetes manifests against the official API schemas (kubernetes-models, offline), and
// every file's shutdown timings consistent with the server's drain (src/config.ts), as docs/deployment.md says.
const deploy = path.resolve(import.meta.dirname, "../../deploy");
const read = (file: string) => fs.readFileSync(path.join(deploy, file), "utf8");

const k8sDocuments = fs.readdirSync(path.join(deploy, "k8s")).filter((file) => file.endsWith(".yaml")).sort()
    .flatMap((file) => parseAllDocuments(read(`k8s/${file}`)).map((document) => ({file, object: document.toJS() as Record<string, any>})));

/** The kubernetes-models class of an object: `apps/v1` + `Deployment` -> kubernetes-models/apps/v1/Deployment. */
async function modelClass(apiVersion: string, kind: string) {
    const group = apiVersion.includes("/") ? apiVersion : `v1/${apiVersion}`.replace(/^v1\/v1$/, "v1");
    const module = await import(`kubernetes-models/${group}/${kind}`) as Record<string, new (data: unknown) => {validate(): void}>;
    return module[kind];
}

function envOf(container: {env?: {name: string, value?: string}[]}) {
    return Object.fromEntries((container.env ?? []).filter((variable) => variable.value != null).map((variable) => [variable.name, variable.value!]));
}

describe("deploy/k8s", () => {
    it("holds a Deployment, Service, PodDisruptionBudget, Ingress, PVC and the download Job", () => {
        expect(k8sDocuments.map(({object}) => object.kind).sort()).toEqual(["Deployment", "Ingress", "Job", "PersistentVolumeClaim", "PodDisruptionBudget", "Service"]);
    });

    it.each(k8sDocuments.map(({file, object}) => [`${file}: ${object.kind}`, object]))("%s validates against the Kubernetes API schema", async (_, object) => {
        const Model = await modelClass(object.apiVersion, object.kind);
        expect(Model).toBeTypeOf("function");
        expect(() => new Model(object).validate()).not.toThrow();
    });

    it("a schema error is caught (the check can fail)", async () => {
        const deployment = structuredClone(k8sDocuments.find(({object}) => object.kind === "Deployment")!.object);
        deployment.spec.template.spec.containers[0].readinessProbe.periodSeconds = "two";
        const Model = await modelClass("apps/v1", "Deployment");
        expect(() => new Model(deployment).validate()).toThrow(/periodSeconds/);
    });

    it("the Deployment's probes, preStop and grace period fit the server's drain, and its settings parse", () => {
        const deployment = k8sDocuments.find(({object}) => object.kind === "Deployment")!.object;
        const pod = deployment.spec.template.spec;
        const container = pod.containers[0];
        const config = loadConfig([], envOf(container));
        expect(container.readinessProbe.httpGet.path).toBe("/health/ready");
        expect(container.livenessProbe.httpGet.path).toBe("/health/live");
        // The readiness probe sees the drain (and the pod leaves the endpoints) before the port closes.
        expect(container.readinessProbe.periodSeconds * container.readinessProbe.failureThreshold).toBeLessThan(config.drainSeconds);
        const preStop = container.lifecycle.preStop.sleep.seconds;
        expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(preStop + config.drainSeconds + config.shutdownTimeoutMs / 1000);
        expect(config.host).toBe("0.0.0.0");
        expect(container.env.find((variable: {name: string}) => variable.name === "API_KEYS").valueFrom.secretKeyRef).toBeDefined();
        const ingress = k8sDocuments.find(({object}) => object.kind === "Ingress")!.object;
        expect(ingress.metadata.annotations["nginx.ingress.kubernetes.io/upstream-hash-by"]).toBe("$http_x_session_affinity");
    });
});

describe("deploy/ shutdown timings", () => {
    it("systemd: SIGTERM, no ExecReload (the server has no reload), TimeoutStopSec covers drain + shutdown timeout", () => {
        const unit = read("systemd/local-openai-server.service");
        const setting = (name: string) => [...unit.matchAll(new RegExp(`^${name}=(.*)$`, "gm"))].map((match) => match[1]);
        const env = Object.fromEntries(read("systemd/local-openai-server.env").split("\n").filter((line) => /^\w+=/.test(line)).map((line) => line.split(/=(.*)/s).slice(0, 2)));
        const config = loadConfig([], env);
        expect(setting("KillSignal")).toEqual(["SIGTERM"]);
        expect(setting("ExecReload")).toEqual([]);
        expect(Number(setting("TimeoutStopSec")[0])).toBeGreaterThan(config.drainSeconds + config.shutdownTimeoutMs / 1000);
    });

    it("compose: the grace period covers drain + shutdown timeout, HAProxy gets every variable its config reads", () => {
        const compose = parseYaml(read("compose.yaml"));
        const replica = compose.services["replica-1"];
        const config = loadConfig([], {...replica.environment, API_KEYS: "sk-x"});
        expect(Number.parseInt(replica.stop_grace_period)).toBeGreaterThan(config.drainSeconds + config.shutdownTimeoutMs / 1000);
        const variables = [...read("haproxy/haproxy.cfg").matchAll(/\$\{(\w+)-/g)].map((match) => match[1]);
        expect(Object.keys(compose.services.haproxy.environment).sort()).toEqual([...new Set(variables)].sort());
        // Out of rotation (fall x inter) well before the port closes.
        expect(Number.parseInt(compose.services.haproxy.environment.CHECK_INTER) * 3).toBeLessThan(config.drainSeconds);
    });

    it("Dockerfile: non-root, HEALTHCHECK on /health/ready, SIGTERM, a drain its settings parse", () => {
        const dockerfile = read("Dockerfile");
        expect(dockerfile).toMatch(/^USER node$/m);
        expect(dockerfile).toMatch(/^HEALTHCHECK .*\n.*\/health\/ready/m);
        expect(dockerfile).toMatch(/^STOPSIGNAL SIGTERM$/m);
        const env = Object.fromEntries([...dockerfile.matchAll(/^\s+(\w+)=(\S+)/gm)].map((match) => [match[1], match[2]]));
        expect(loadConfig([], env).drainSeconds).toBe(10);
    });
});
