/*
 * The Lua scripts of the Redis tracker store. Every script takes the same KEYS, in the order of
 * `TRACKER_KEYS`, all under one hash tag (one cluster slot), and reads the time from Redis itself
 * (`TIME`), so that leases need no clock agreement across the fleet. Scripts run atomically: no
 * other process acts between a script's reads and its writes.
 *
 * The record JSON is written and read by the store only, never decoded in Lua (cjson would turn an
 * empty array into an object); what a script needs of it comes as its own argument.
 */

/**
 * The store's keys, after the hash-tagged prefix:
 * - `due`: ZSET of transfers that are not final, scored by when they are next due (ms on Redis's
 *   clock); while leased, by when the lease ends, so that an expired lease is due again by itself.
 * - `records`: HASH transferId → the record's JSON, without its observation.
 * - `observed`, `ranks`: HASHes transferId → the newest observed transfer's JSON, and its rank.
 * - `fences`: HASH transferId → the fence, one more with every claim.
 * - `leases`: HASH transferId → when its lease ends (ms on Redis's clock).
 * - `woken`: SET of leased transfers that `observe` asked to be due at once after the lease.
 * - `final`: ZSET of final transfers, scored by their record's `updatedAt`, for `prune`.
 * - `users`: ZSET userId → the latest `trackedAt`/`updatedAt` of its records, for `users`.
 * - `list`, `list:state`, `list:user`, `list:user:state`: ZSETs of score 0 that `list` pages by
 *   member (`ZRANGEBYLEX`), one per filter: the id; `o` or `f` (open, final) and the id; the
 *   user's id in hex, `:` and the id; the user's in hex, `:`, `o` or `f` and the id. Hex keeps a
 *   user's members apart from every other user's, whatever characters the ids hold.
 * - `list:indexed`: set once every record written before the `list` keys existed was indexed.
 */
export const TRACKER_KEYS = [
  'due',
  'records',
  'observed',
  'ranks',
  'fences',
  'leases',
  'woken',
  'final',
  'users',
  'list',
  'list:state',
  'list:user',
  'list:user:state',
  'list:indexed',
] as const;

const NOW = `local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)`;

/** The claimed transfer as one reply: fence, record, observation ('' for none), rank. */
const LEASE = `local function lease(id, untilMs)
  redis.call('HSET', KEYS[6], id, untilMs)
  redis.call('SREM', KEYS[7], id)
  local fence = redis.call('HINCRBY', KEYS[5], id, 1)
  return {id, fence, redis.call('HGET', KEYS[2], id),
    redis.call('HGET', KEYS[3], id) or '', redis.call('HGET', KEYS[4], id) or '-1'}
end`;

/** A user's id in hex: the store's code computes the same (`listPrefix`). */
const HEX = `local function hexof(text)
  return (string.gsub(text, '.', function(c) return string.format('%02x', string.byte(c)) end))
end`;

/** Puts a transfer in the list keys under its user and state, out of its other state's. */
const INDEX = `${HEX}
local function index(id, user, final)
  local u = hexof(user) .. ':'
  local flag, other = 'o', 'f'
  if final then flag, other = 'f', 'o' end
  redis.call('ZADD', KEYS[10], 0, id)
  redis.call('ZREM', KEYS[11], other .. id)
  redis.call('ZADD', KEYS[11], 0, flag .. id)
  redis.call('ZADD', KEYS[12], 0, u .. id)
  redis.call('ZREM', KEYS[13], u .. other .. id)
  redis.call('ZADD', KEYS[13], 0, u .. flag .. id)
end`;

/** ARGV: id, record, observed ('' for none), rank, final ('1'|'0'), userId, trackedAt. */
export const TRACK = `
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return 0 end
${NOW}
${INDEX}
index(ARGV[1], ARGV[6], ARGV[5] == '1')
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[3], ARGV[1], ARGV[3]) end
redis.call('HSET', KEYS[4], ARGV[1], ARGV[4])
if ARGV[5] == '1' then redis.call('ZADD', KEYS[8], ARGV[7], ARGV[1])
else redis.call('ZADD', KEYS[1], now, ARGV[1]) end
redis.call('ZADD', KEYS[9], 'GT', ARGV[7], ARGV[6])
return 1`;

/**
 * The claim of due work: the earliest due first, each re-scored to the end of its lease and its
 * fence raised. A transfer in `due` is never final and holds no unexpired lease: a lease scores
 * it past now. ARGV: limit, lease (ms).
 */
export const CLAIM_DUE = `
${NOW}
${LEASE}
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
local untilMs = now + tonumber(ARGV[2])
local out = {}
for _, id in ipairs(ids) do
  if redis.call('HEXISTS', KEYS[2], id) == 1 then
    redis.call('ZADD', KEYS[1], untilMs, id)
    out[#out + 1] = lease(id, untilMs)
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return out`;

/** One transfer, due or not, unless another lease on it holds. ARGV: id, lease (ms). */
export const CLAIM_ONE = `
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then return {'unknown'} end
${NOW}
${LEASE}
if tonumber(redis.call('HGET', KEYS[6], ARGV[1]) or '0') > now then return {'busy'} end
local untilMs = now + tonumber(ARGV[2])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then redis.call('ZADD', KEYS[1], untilMs, ARGV[1]) end
return {'claimed', lease(ARGV[1], untilMs)}`;

/**
 * Keeps a lease whose fence is still the latest and that was not given back (`complete` and
 * `release` delete its end): it now ends `lease` ms from now, and so does its score in `due`.
 * ARGV: id, fence, lease (ms).
 */
export const RENEW = `
if tonumber(redis.call('HGET', KEYS[5], ARGV[1]) or '0') ~= tonumber(ARGV[2]) then return 0 end
if not redis.call('HGET', KEYS[6], ARGV[1]) then return 0 end
${NOW}
local untilMs = now + tonumber(ARGV[3])
redis.call('HSET', KEYS[6], ARGV[1], untilMs)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then redis.call('ZADD', KEYS[1], untilMs, ARGV[1]) end
return 1`;

/**
 * The fenced commit: nothing is written unless the fence is still the transfer's latest. An
 * observation of a higher rank recorded during the lease is kept, and with it, or with a wake-up
 * during the lease, the transfer is due at once.
 * ARGV: id, fence, record, observed, rank, final ('1'|'0'), next read in (ms), userId, updatedAt.
 */
export const COMPLETE = `
if tonumber(redis.call('HGET', KEYS[5], ARGV[1]) or '0') ~= tonumber(ARGV[2]) then return 0 end
${NOW}
${INDEX}
index(ARGV[1], ARGV[8], ARGV[6] == '1')
local newer = tonumber(redis.call('HGET', KEYS[4], ARGV[1]) or '-1') > tonumber(ARGV[5])
if not newer then
  if ARGV[4] ~= '' then redis.call('HSET', KEYS[3], ARGV[1], ARGV[4]) else redis.call('HDEL', KEYS[3], ARGV[1]) end
  redis.call('HSET', KEYS[4], ARGV[1], ARGV[5])
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('HDEL', KEYS[6], ARGV[1])
local woken = redis.call('SREM', KEYS[7], ARGV[1]) == 1
if ARGV[6] == '1' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('ZADD', KEYS[8], ARGV[9], ARGV[1])
else
  local at = now + tonumber(ARGV[7])
  if newer or woken then at = now end
  redis.call('ZADD', KEYS[1], at, ARGV[1])
end
redis.call('ZADD', KEYS[9], 'GT', ARGV[9], ARGV[8])
return 1`;

/** Drops the lease without writing, if the fence holds. ARGV: id, fence, retry in (ms). */
export const RELEASE = `
if tonumber(redis.call('HGET', KEYS[5], ARGV[1]) or '0') ~= tonumber(ARGV[2]) then return 0 end
${NOW}
redis.call('HDEL', KEYS[6], ARGV[1])
local woken = redis.call('SREM', KEYS[7], ARGV[1]) == 1
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  local at = now + tonumber(ARGV[3])
  if woken then at = now end
  redis.call('ZADD', KEYS[1], at, ARGV[1])
end
return 1`;

/**
 * A state the router saw: kept when its rank is higher, and the transfer due at once, or once its
 * lease ends. Final and unknown transfers (not in `due`) are left alone. ARGV: id, observed, rank.
 */
export const OBSERVE = `
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
if tonumber(ARGV[3]) > tonumber(redis.call('HGET', KEYS[4], ARGV[1]) or '-1') then
  redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
  redis.call('HSET', KEYS[4], ARGV[1], ARGV[3])
end
${NOW}
if tonumber(redis.call('HGET', KEYS[6], ARGV[1]) or '0') > now then
  redis.call('SADD', KEYS[7], ARGV[1])
else
  redis.call('ZADD', KEYS[1], 'LT', now, ARGV[1])
end
return 1`;

/** ARGV: id. The record, its observation and rank, read together. */
export const GET = `
local record = redis.call('HGET', KEYS[2], ARGV[1])
if not record then return {} end
return {record, redis.call('HGET', KEYS[3], ARGV[1]) or '', redis.call('HGET', KEYS[4], ARGV[1]) or '-1'}`;

/**
 * Deletes up to a batch of final transfers updated before a time, and users not seen since then.
 * ARGV: before (epoch ms, exclusive), batch size.
 */
export const PRUNE = `
${HEX}
local ids = redis.call('ZRANGEBYSCORE', KEYS[8], '-inf', '(' .. ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, id in ipairs(ids) do
  local ok, stored = pcall(cjson.decode, redis.call('HGET', KEYS[2], id) or '')
  if ok and type(stored) == 'table' and type(stored.userId) == 'string' then
    local u = hexof(stored.userId) .. ':'
    redis.call('ZREM', KEYS[12], u .. id)
    redis.call('ZREM', KEYS[13], u .. 'o' .. id, u .. 'f' .. id)
  end
  redis.call('ZREM', KEYS[10], id)
  redis.call('ZREM', KEYS[11], 'o' .. id, 'f' .. id)
  for i = 2, 6 do redis.call('HDEL', KEYS[i], id) end
  redis.call('SREM', KEYS[7], id)
  redis.call('ZREM', KEYS[8], id)
  redis.call('ZREM', KEYS[1], id)
end
redis.call('ZREMRANGEBYSCORE', KEYS[9], '-inf', '(' .. ARGV[1])
return #ids`;

/**
 * A page of one list key: the members from `min` to `max` (a `ZRANGEBYLEX` range), at most a
 * limit, each read with its record, observation and rank. ARGV: list key (10 to 13), min, max,
 * limit, the length of the members' prefix before the id.
 */
export const LIST = `
local members = redis.call('ZRANGEBYLEX', KEYS[tonumber(ARGV[1])], ARGV[2], ARGV[3], 'LIMIT', 0, tonumber(ARGV[4]))
local out = {}
for _, member in ipairs(members) do
  local id = string.sub(member, tonumber(ARGV[5]) + 1)
  local record = redis.call('HGET', KEYS[2], id)
  if record then
    out[#out + 1] = {id, 0, record, redis.call('HGET', KEYS[3], id) or '', redis.call('HGET', KEYS[4], id) or '-1'}
  end
end
return out`;

/**
 * Indexes a batch of the records written before the list keys existed (by an earlier version of
 * the store), from an `HSCAN` cursor, and marks the store indexed after the last batch. Indexing
 * twice changes nothing. ARGV: scan cursor, batch size. Answers the next cursor, or 'done'.
 */
export const BACKFILL = `
if redis.call('EXISTS', KEYS[14]) == 1 then return 'done' end
${INDEX}
local scan = redis.call('HSCAN', KEYS[2], ARGV[1], 'COUNT', tonumber(ARGV[2]))
local entries = scan[2]
for i = 1, #entries, 2 do
  local id = entries[i]
  local ok, stored = pcall(cjson.decode, entries[i + 1])
  if ok and type(stored) == 'table' and type(stored.userId) == 'string' then
    index(id, stored.userId, redis.call('ZSCORE', KEYS[8], id) ~= false)
  end
end
if scan[1] == '0' then
  redis.call('SET', KEYS[14], '1')
  return 'done'
end
return scan[1]`;
