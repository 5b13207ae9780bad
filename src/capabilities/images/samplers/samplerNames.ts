/** The six samplers of the image API, by their AUTOMATIC1111 names (README "Samplers"). */
export const samplerNames = ["Euler", "Euler a", "Heun", "DPM++ 2M Karras", "DPM++ SDE Karras", "DDIM"] as const;

export type SamplerName = typeof samplerNames[number];
