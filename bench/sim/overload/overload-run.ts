/**
 * One overload replay: a workload offered at `load` x the pool's capacity at the objective, by
 * a tenant mix of clients (tenants.ts) that time out and retry (sim/fleet/client-front.ts), to a
 * fleet whose router has admission on (the pool's settings) or off (null: the baseline), and
 * its figures (overload-figures.ts). A pure function of its inputs, so runs can go to worker
 * threads and a seed replays a run exactly.
 */
import { profileNamed } from "../../../sim/engine/profiles.ts";
import type { ClientModel } from "../../../sim/fleet/client-front.ts";
import { simulate } from "../../../sim/fleet/fleet-sim.ts";
import { informationOf } from "../../../sim/fleet/information.ts";
import type { BenchSpec } from "../../../sim/fleet/runner.ts";
import { round } from "../../../sim/report/stats.ts";
import type { Workload } from "../../../sim/workload/workload.ts";
import { type PolicyType, policyOf } from "../../../src/core/policies/index.ts";
import type { AdmissionSettings } from "../../../src/core/settings/admission-settings.ts";
import { atRate } from "../capacity/probe.ts";
import { type OverloadFigures, overloadFigures } from "./overload-figures.ts";
import { assignTenants, clientsOf, type Tenant } from "./tenants.ts";

export interface OverloadCase {
  /** The tenant mix's name (overload-scenarios.ts). */
  scenario: string;
  tenants: Tenant[];
  /** Offered requests/s over the pool's capacity at the objective. */
  load: number;
  /** The pool's admission settings; null: admission off. */
  admission: AdmissionSettings | null;
}

export interface OverloadSetup {
  /** The workload (its `load` is ignored: the case's load sets the rate). */
  spec: BenchSpec;
  policy: PolicyType;
  /** The pool's capacity at the objective, requests/s (`npm run bench:capacity`). */
  capacityRps: number;
  /** TTFT a request must meet to count in goodput (the capacity benchmark's objective). */
  objectiveMs: number;
  clients: ClientModel;
}

export interface OverloadRun extends OverloadCase {
  figures: OverloadFigures;
  /** Engine-reported hit rate and busy share of the fleet, over requests served. */
  hitRate: number;
  utilisation: number;
}

export function runOverload(base: Workload, setup: OverloadSetup, c: OverloadCase): OverloadRun {
  const { spec, policy } = setup;
  const w = atRate(base, c.load * setup.capacityRps);
  const tenantOf = assignTenants(w, c.tenants, spec.seed);
  const clients = clientsOf(c.tenants);
  const { result, clients: record } = simulate(w, {
    policy: policyOf(policy),
    origins: spec.origins,
    profile: profileNamed(spec.profile),
    seed: spec.seed,
    information: informationOf(policy, { ...spec, prefillCalibration: 1 }),
    clients: {
      admission: c.admission,
      clients: setup.clients,
      clientOf: (i) => clients[tenantOf[i] as number] as (typeof clients)[number],
      seed: spec.seed,
    },
  });
  if (!record) throw new Error("an overload replay has clients");
  const figures = overloadFigures({
    w,
    record,
    tenants: c.tenants,
    tenantOf,
    objectiveMs: setup.objectiveMs,
    capacityRps: setup.capacityRps,
  });
  return { ...c, figures, hitRate: result.hitRate, utilisation: round(result.utilisation.busy, 3) };
}
