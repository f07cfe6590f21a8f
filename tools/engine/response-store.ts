/**
 * The engine's stored responses (`store`, on by default in the Responses API), kept in its own
 * memory as vLLM keeps them: only this engine can continue one (`previous_response_id`), show it
 * (`GET /v1/responses/{id}`) or delete it. Each holds the response object and the conversation
 * it ended (every input item before it, then its output), which a follow-up continues from.
 * Bounded: past `capacity`, the least recently used is forgotten (a later follow-up naming it
 * gets the 404 an unknown id gets).
 */

export interface StoredResponse {
  response: Record<string, unknown>;
  /** The input items of the whole conversation, then this response's output items. */
  conversation: unknown[];
}

export class ResponseStore {
  readonly #capacity: number;
  readonly #byId = new Map<string, StoredResponse>();

  constructor(capacity: number) {
    if (!(Number.isInteger(capacity) && capacity >= 1)) {
      throw new Error(`storedResponses must be a positive integer, got ${capacity}`);
    }
    this.#capacity = capacity;
  }

  get size(): number {
    return this.#byId.size;
  }

  get(id: string): StoredResponse | undefined {
    const stored = this.#byId.get(id);
    if (stored) {
      this.#byId.delete(id);
      this.#byId.set(id, stored);
    }
    return stored;
  }

  set(id: string, stored: StoredResponse): void {
    this.#byId.delete(id);
    this.#byId.set(id, stored);
    if (this.#byId.size > this.#capacity) {
      const oldest = this.#byId.keys().next().value as string;
      this.#byId.delete(oldest);
    }
  }

  delete(id: string): boolean {
    return this.#byId.delete(id);
  }
}
