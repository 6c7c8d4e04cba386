-- hl_redis_script.lua - one decision of mod_hotlimit's Redis store, run
-- atomically by Redis (EVALSHA): every window of every quota of a request
-- is checked, and the request is counted only if every quota not in dry
-- run admits it, with the algorithms of src/core/hl_bucket.c (fixed, sliding,
-- gcra), on the server's clock (TIME). Limits come as arguments, so a
-- changed table changes them without touching counters.
--
-- KEYS: the counter keys, window by window, quota by quota.
-- ARGV: mode ("d": decide, "c": count one quota after the response, "r":
--       give back a unit one quota took at its decision, see refund),
--       "s": settle a reservation, see below),
--       the number of quotas, the cost counted (1 when deciding; a cost=
--       charge when counting or settling), the lease wanted (0: none; see
--       below), then per quota: algo (0 fixed, 1 sliding,
--       2 gcra, 3 log), windows, commit (the units an admitted request counts
--       now, which must all fit: 1, count=failures|status too; a cost=
--       quota's reservation (reserve=, never with log), else 0 for cost= and
--       ban checks), dry run (1/0) plus 2 when commit is a reservation
--       (held until settled, see below), then per window: limit, window
--       ms, burst.
-- Returns (modes "d" and "c": as one string, the numbers separated by
-- one space; "r" and "s": an array):
--          admitted (1/0), the lease granted and for how long (ms), then
--          per window: admit, remaining, reset ms, retry ms, the mark
--          of the unit counted (the state's t after the commit; 0 when not
--          counted), which a refund names, and held (1: refused, and the
--          request would fit without the units reservations of running
--          requests hold there: hl_verdict_t held; fixed windows only).
-- A lease (HotLimitStoreLease, src/core/hl_lease.h): an admitted decision of one
-- quota that counts now may ask for extra units, counted with it, which
-- the asking httpd child admits without asking again. At most an eighth
-- of what is left in each window is granted, and the lease lasts until the
-- end of the window the units were counted in. Never for gcra: units
-- charged ahead and spent later would stack on a refilled bucket; never
-- for log: it is exact, and a unit spent later than counted is not.
-- A window at its limit after the decision (refused, or counted up to its
-- limit) is also put in the sorted set PREFIX{hl}:limited (see list_add).
-- Mode "l" lists that set for the status page instead (see list).
-- Each key holds "t c p": t the window start in ms (gcra: the TAT in
-- microseconds), c the count, p the previous window's count (sliding),
-- set with its expiry in one command. A fixed window keeps in p how many
-- of its c units are held by reservations of requests still running
-- (hl_bucket_hold): never more than c, gone with the window. A log key (algo=log, issue 20) is a
-- sorted set instead: one member "MS:SEQ" per admitted request, scored
-- with its time (ms), expiring a window after the newest. A key whose
-- quota changed algorithm reads as empty and is overwritten.
local tm = redis.call('TIME')
local now = tonumber(tm[1]) * 1000 + math.floor(tonumber(tm[2]) / 1000)

local function ceil_div(a, b) return math.floor((a + b - 1) / b) end

local function load(key)
  local v = redis.pcall('GET', key)
  if type(v) ~= 'string' then return 0, 0, 0 end
  local t, c, p = string.match(v, '^(%-?%d+) (%d+) (%d+)$')
  return tonumber(t) or 0, tonumber(c) or 0, tonumber(p) or 0
end

-- Stores a state for ttl ms (one command: the value and its expiry).
local function store(key, t, c, p, ttl)
  redis.call('SET', key, string.format('%d %d %d', t, c, p), 'PX', math.max(ttl, 1))
end

-- Each check returns admit, remaining, reset, retry, then the state as
-- rolled forward to now (t, c, p).
-- fixed also returns held (see the reply) after the state.
local function fixed(key, limit, w)
  local t, c, p = load(key)
  if c > 0 then
    if now < t then t = now elseif now - t >= w then c = 0; p = 0; t = now end
  end
  if c == 0 then p = 0 end
  local finish = ((c == 0) and now or t) + w
  if c < limit then return 1, limit - c - 1, finish - now, 0, t, c, p, 0 end
  local held = (p > 0 and c - math.min(p, c) < limit) and 1 or 0
  return 0, 0, finish - now, finish - now, t, c, p, held
end

-- Rolls a sliding state to the aligned window holding now (a window on:
-- the count becomes the previous one; further: both empty). Returns t, c, p.
local function sliding_roll(t, c, p, w)
  local cur = now - (now % w)
  if t > cur then t = cur end
  if cur > t then
    if cur - t < 2 * w then p = c else p = 0 end
    c = 0; t = cur
  end
  return t, c, p
end

local function sliding(key, limit, w)
  local t, c, p = load(key)
  t, c, p = sliding_roll(t, c, p, w)
  local decay = p * (w - (now - t))
  if c + 1 <= limit and decay <= (limit - c - 1) * w then
    return 1, math.floor(((limit - c - 1) * w - decay) / w), t + 2 * w - now, 0, t, c, p
  end
  local at
  if c + 1 <= limit and p > 0 and math.floor((limit - c - 1) * w / p) >= 1 then
    at = t + w - math.floor((limit - c - 1) * w / p)
  elseif c == 0 then
    at = t + w
  else
    local q = math.floor((limit - 1) * w / c)
    if q >= w then at = t + w else at = t + w + (w - q) end
  end
  local reset = (c > 0) and (t + 2 * w) or (t + w)
  return 0, 0, reset - now, at - now, t, c, p
end

-- Whether units (1 .. burst) fit: the TAT, clamped with the bucket's own
-- tolerance, is at most tau - (units - 1) intervals ahead; an admission's
-- reset is when the bucket is full again after the units (gcra_check_n).
-- A TAT further ahead than tau + interval (a cost charged on a full
-- bucket) is pulled back and kept so, as hl_bucket.c does: it drains from
-- there, not from where the charge left it.
local function gcra(key, limit, w, burst, units)
  local tat = load(key)
  local now_us = now * 1000
  local interval = ceil_div(w * 1000, limit)
  local b = (burst > 0) and burst or limit
  local tau = (b - 1) * interval
  if tat > now_us + tau + interval then
    tat = now_us + tau + interval
    store(key, tat, 0, 0, ceil_div(tat - now_us, 1000) + 1)
  end
  local eff = math.max(tat, now_us)
  local room = tau - (units - 1) * interval
  if eff - now_us <= room then
    return 1, math.floor((room - (eff - now_us)) / interval),
           ceil_div(eff + units * interval - now_us, 1000), 0, tat, 0, 0
  end
  return 0, 0, ceil_div(eff - now_us, 1000), ceil_div(eff - room - now_us, 1000), tat, 0, 0
end

-- algo=log: the sliding log of src/core/hl_log.c. Drops the entries that left
-- the window (t <= now - w), then admits while fewer than limit remain;
-- a refusal retries when the (n - limit)th oldest leaves, resets when the
-- newest does. Returns as the others, t being the newest entry's time.
local function log_check(key, limit, w)
  local ty = redis.call('TYPE', key)
  if ty.ok ~= 'zset' then
    if ty.ok ~= 'none' then redis.call('DEL', key) end
    return 1, limit - 1, w, 0, now, 0, 0
  end
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - w)
  local n = redis.call('ZCARD', key)
  if n < limit then return 1, limit - n - 1, w, 0, now, n, 0 end
  local old = redis.call('ZRANGE', key, n - limit, n - limit, 'WITHSCORES')
  local new = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  local retry = math.max(tonumber(old[2]) + w - now, 1)
  local last = tonumber(new[2])
  return 0, 0, math.max(last + w - now, retry), retry, last, n, 0
end

-- Returns the members of log key at time at, and the largest SEQ among
-- them (-1 when none) with its member.
local function log_at(key, at)
  local m = redis.call('ZRANGEBYSCORE', key, at, at)
  local top, name = -1, nil
  for i = 1, #m do
    local seq = tonumber(string.match(m[i], ':(%d+)$')) or 0
    if seq > top then top = seq; name = m[i] end
  end
  return top, name
end

-- Adds n entries at now to log key (members unique: after the largest
-- SEQ already at now) and keeps it a window. Returns now, the mark.
local function log_commit(key, w, n)
  local top = log_at(key, now)
  for i = 1, n do
    redis.call('ZADD', key, now, string.format('%d:%d', now, top + i))
  end
  redis.call('PEXPIRE', key, w)
  return now
end

-- How many requests a window holds (hl_bucket_cap): a gcra burst when
-- set, else its limit (1 when 0).
local function cap_of(algo, limit, burst)
  if algo == 2 and burst > 0 then return burst end
  if limit < 1 then return 1 end
  return limit
end

-- Counts n requests (at most the window's limit: a cost charge never
-- outlasts its window; with whole, a reservation the check found to fit,
-- at most what the window holds: a gcra burst may be more) in a window
-- whose state was rolled to now. gcra moves the TAT (as the check clamped
-- it) n intervals on, no further than n single commits would: now + tau +
-- 2 intervals (hl_bucket_commit_n). A fixed window adds hold of them to
-- its held units (a reservation: see load). Returns the state's new t.
local function commit(algo, key, limit, w, burst, t, c, p, n, whole, hold)
  local most = whole and cap_of(algo, limit, burst) or limit
  if n > most then n = most end
  if algo == 3 then return log_commit(key, w, n) end
  if algo == 2 then
    local now_us = now * 1000
    local interval = ceil_div(w * 1000, limit)
    local b = (burst > 0) and burst or limit
    local tat = math.min(math.max(t, now_us) + n * interval,
                         now_us + (b + 1) * interval)
    store(key, tat, 0, 0, ceil_div(tat - now_us, 1000) + 1)
    return tat
  elseif algo == 1 then
    store(key, t, c + n, p, 2 * w + 1)
  else
    if c == 0 then t = now; p = 0 end
    store(key, t, c + n, math.min(p + (hold or 0), c + n), t + w - now)
  end
  return t
end

-- The keys at their limit, for the status page of every server sharing
-- this Redis: a sorted set PREFIX{hl}:limited (the hash tag of the counter
-- keys: one cluster slot) of counter keys, each scored with the time (ms,
-- this server's clock) its counter clears. Touched only for a window at
-- its limit, never on an ordinary admission; bounded: cleared members are
-- dropped at each add, at most LIMITED_MAX are kept (those that clear
-- soonest go first), and the set expires with its last member. Through
-- pcall: a user whose ACL lacks these commands still gets its decisions.
-- Ban counters ("ban|CLIENT" of the directive origin, window 0, after the
-- virtual host's "host:port") also go to their own set PREFIX{hl}:bans,
-- bounded by BANS_MAX, so that a flood of other counters at their limit
-- never pushes a ban out of the list. The key layout is defined once, in
-- src/core/hl_slotkey.h: bans_set's two patterns are its HL_SLOTKEY_BAN_LUA_MAIN
-- and HL_SLOTKEY_BAN_LUA_VHOST (hl_slotkey_is_ban_slot in C), and
-- t/unit/test_slotkey_lua.sh checks that both sides agree.
local LIMITED_MAX = 10000
local BANS_MAX = 100000

-- Under redis-cluster:// the tag is a bucket's ({hl:B.S}, 1024 of them):
-- each bucket has its own sets, in the slot of the counters that feed
-- them, so this script keeps them in the same atomic call; redis:// keeps
-- its one {hl} pair. The pattern's {hl[^}]*} matches both.
local function limited_set(key)
  return (string.match(key, '^(.-{hl[^}]*}:)') or '') .. 'limited'
end

-- Returns the bans set when key is a ban counter, else nil.
local function bans_set(key)
  local head = string.match(key, '^(.-{hl[^}]*}:)d0ban|')
               or string.match(key, '^(.-{hl[^}]*}:)d0[^|/]*:%d+ban|')
  return head and (head .. 'bans') or nil
end

-- Adds key to set z, scored at (when it clears), keeping at most max
-- members (those that clear last). A key already listed only moves: the
-- set does not grow, so it is swept and trimmed only when one is new.
local function set_add(z, key, at, max)
  if redis.pcall('ZADD', z, at, key) == 1 then
    redis.pcall('ZREMRANGEBYSCORE', z, '-inf', now)
    local n = redis.pcall('ZCARD', z)
    if type(n) == 'number' and n > max then
      redis.pcall('ZREMRANGEBYRANK', z, 0, n - max - 1)
    end
  end
  local ttl = redis.pcall('PTTL', z)
  if type(ttl) == 'number' and ttl < at - now then redis.pcall('PEXPIRE', z, at - now) end
end

-- Returns when a counter whose state has t clears: hl_bucket_expires_ms.
local function expires(algo, t, w)
  if algo == 3 then return t + w end      -- log: t is the newest entry
  if algo == 2 then return ceil_div(t, 1000) end
  if algo == 1 then return t + 2 * w end
  return t + w
end

local function list_add(key, at)
  if at <= now then return end
  set_add(limited_set(key), key, at, LIMITED_MAX)
  local bans = bans_set(key)
  if bans then set_add(bans, key, at, BANS_MAX) end
end

-- Mode "l": lists set z (KEYS[1]: PREFIX{hl}:limited or PREFIX{hl}:bans)
-- for the status page. Drops the members that cleared or whose counter is
-- gone, and returns now, the number of members left, then for the (at
-- most) max that clear last: the key, when it clears (ms) and its count
-- (0 for gcra).
local function list(z, max)
  redis.call('ZREMRANGEBYSCORE', z, '-inf', now)
  local total = redis.call('ZCARD', z)
  local got = redis.call('ZREVRANGEBYSCORE', z, '+inf', '(' .. now, 'WITHSCORES', 'LIMIT', 0, max)
  local out = { now, 0 }
  for i = 1, #got, 2 do
    local v = redis.pcall('GET', got[i])
    local c
    if type(v) == 'string' then
      c = tonumber(string.match(v, '^%-?%d+ (%d+)')) or 0
    elseif redis.call('TYPE', got[i]).ok == 'zset' then
      c = redis.call('ZCARD', got[i])      -- a log (algo=log)
    end
    if c then
      out[#out + 1] = got[i]; out[#out + 1] = tonumber(got[i + 1]); out[#out + 1] = c
    else
      redis.call('ZREM', z, got[i])
      total = total - 1
    end
  end
  out[2] = total
  return out
end

if ARGV[1] == 'l' then return list(KEYS[1], tonumber(ARGV[2])) end

-- Mode "r" (count=failures|status, exact under concurrency): the request
-- took its unit at the decision and its final status does not count, so
-- each window gives back the unit, only while the counter instance it was
-- counted in still holds it (its mark, returned by the decision): fixed -
-- the same window start; sliding - the same aligned window, or its count
-- as the previous window's once it moved on; gcra - the same TAT (no
-- request counted since), still ahead of now (not drained: a key whose
-- TTL ran out is one). Never below zero, never in a window that began
-- since, and never a second decision. ARGV as for "d" with one quota,
-- then one mark per window. Returns { windows given back }.
-- Gives back at most n units under those rules (n > 1: the unused part of
-- a reservation, mode "s"; a log gives back its newest entry, one unit).
-- Returns 1 if any was given back, else 0.
local function refund_one(algo, key, limit, w, mark, n)
  if algo == 3 then
    -- log: the newest entry at its time, while it is in the window.
    if redis.call('TYPE', key).ok ~= 'zset' or mark <= now - w then return 0 end
    local top, name = log_at(key, mark)
    if top < 0 then return 0 end
    redis.call('ZREM', key, name)
    return 1
  end
  if algo == 2 then
    local tat = load(key)
    local now_us = now * 1000
    if tat ~= mark or tat <= now_us then return 0 end
    tat = tat - n * ceil_div(w * 1000, limit)
    if tat <= now_us then redis.call('DEL', key)
    else store(key, tat, 0, 0, ceil_div(tat - now_us, 1000) + 1) end
    return 1
  end
  local t, c, p = load(key)
  if algo == 1 then
    t, c, p = sliding_roll(t, c, p, w)
    if t == mark and c > 0 then c = c - math.min(n, c)
    elseif t - w == mark and p > 0 then p = p - math.min(n, p)
    else return 0 end
    store(key, t, c, p, 2 * w + 1)
    return 1
  end
  if c == 0 or t ~= mark or now < t or now - t >= w then return 0 end
  c = c - math.min(n, c)
  store(key, t, c, math.min(p, c), t + w - now)
  return 1
end

-- The request whose reservation of n units sits at mark in fixed window
-- key has settled: they are no longer held (hl_bucket_release).
local function release(algo, key, w, mark, n)
  if algo ~= 0 then return end
  local t, c, p = load(key)
  if c == 0 or p == 0 or t ~= mark or now < t or now - t >= w then return end
  store(key, t, c, p - math.min(n, p), t + w - now)
end

if ARGV[1] == 'r' then
  local algo, nw = tonumber(ARGV[5]), tonumber(ARGV[6])
  local given = 0
  for j = 1, nw do
    local at = 9 + 3 * (j - 1)
    given = given + refund_one(algo, KEYS[j], tonumber(ARGV[at]),
                               tonumber(ARGV[at + 1]), tonumber(ARGV[9 + 3 * nw + j - 1]), 1)
  end
  return { given }
end

-- Checks whether units (>= 1) fit in a window now (hl_bucket_check_n):
-- fixed and sliding, where one unit fits with units - 1 less room; gcra,
-- where units fit the burst (see gcra); more than the window holds never
-- fits (retry after a window). Returns what a check returns.
local function check_units(algo, key, limit, w, burst, units)
  local cap = cap_of(algo, limit, burst)
  local room = cap - units + 1
  local r
  if room < 1 then room = cap end
  if algo == 1 then r = { sliding(key, room, w) }
  elseif algo == 2 then r = { gcra(key, limit, w, burst, (units > cap) and 1 or units) }
  else r = { fixed(key, room, w) } end
  if units > cap then r[1] = 0; r[2] = 0; r[4] = w; r[8] = 0 end
  return r
end

-- Mode "s" (reserve=): the request took its reservation (ARGV[7] units) at
-- the decision; its real cost is ARGV[3]. A smaller cost gives back the
-- rest where the reservation still sits (refund_one's rules, marks after
-- the windows as for "r"); a larger one counts the excess now, capped at
-- each window's limit. Returns { windows touched }.
if ARGV[1] == 's' then
  local algo, nw = tonumber(ARGV[5]), tonumber(ARGV[6])
  local cost, reserved = tonumber(ARGV[3]), tonumber(ARGV[7])
  local touched = 0
  for j = 1, nw do
    local at = 9 + 3 * (j - 1)
    local limit, w, burst = tonumber(ARGV[at]), tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2])
    release(algo, KEYS[j], w, tonumber(ARGV[9 + 3 * nw + j - 1]), reserved)
    if cost < reserved then
      touched = touched + refund_one(algo, KEYS[j], limit, w,
                                     tonumber(ARGV[9 + 3 * nw + j - 1]), reserved - cost)
    elseif cost > reserved then
      local r = check_units(algo, KEYS[j], limit, w, burst, 1)
      commit(algo, KEYS[j], limit, w, burst, r[5], r[6], r[7], cost - reserved, false)
      touched = touched + 1
    end
  end
  return { touched }
end

local mode, nitems, cost = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local want = tonumber(ARGV[4])
local a, k, all = 5, 1, 1
local items = {}
for i = 1, nitems do
  local flags = tonumber(ARGV[a + 3])
  local it = { algo = tonumber(ARGV[a]), nw = tonumber(ARGV[a + 1]),
               commit = tonumber(ARGV[a + 2]), dry = flags % 2,
               hold = (flags >= 2) and tonumber(ARGV[a + 2]) or 0,
               admit = 1, w = {} }
  a = a + 4
  for j = 1, it.nw do
    local limit, w, burst = tonumber(ARGV[a]), tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
    local key = KEYS[k]
    local r
    a = a + 3; k = k + 1
    if it.algo == 3 then r = { log_check(key, limit, w) }
    else r = check_units(it.algo, key, limit, w, burst, math.max(it.commit, 1)) end
    it.w[j] = { key = key, limit = limit, win = w, burst = burst, r = r }
    if r[1] == 0 then it.admit = 0 end
  end
  if it.admit == 0 and it.dry == 0 then all = 0 end
  items[i] = it
end
-- The lease: an eighth of the least left over the windows, at most want.
local grant = 0
if mode == 'd' and want > 0 and all == 1 and nitems == 1 and items[1].commit == 1
   and items[1].dry == 0 and items[1].admit == 1 and items[1].algo ~= 2
   and items[1].algo ~= 3 then
  grant = want
  for j = 1, items[1].nw do
    local share = math.floor(items[1].w[j].r[2] / 8)
    if share < grant then grant = share end
  end
  if grant < 0 then grant = 0 end
end
local lease_ms = 0
local out = { all, grant, 0 }
for i = 1, nitems do
  local it = items[i]
  local count = (mode == 'c') or (all == 1 and it.commit > 0 and it.admit == 1)
  local n = cost + grant
  if mode == 'd' then n = it.commit + grant end
  for j = 1, it.nw do
    local x = it.w[j]
    local r = x.r
    local t = r[5]
    if count then
      t = commit(it.algo, x.key, x.limit, x.win, x.burst, r[5], r[6], r[7], n, mode == 'd',
                 (mode == 'd') and it.hold or 0)
    end
    -- At its limit now: refused, or counted up to its limit.
    if r[1] == 0 or (count and r[2] < math.min(n, x.limit)) then
      list_add(x.key, expires(it.algo, t, x.win))
    end
    if grant > 0 then
      -- The units count in this window: usable until it ends.
      local ends = t + x.win - now
      if j == 1 or ends < lease_ms then lease_ms = ends end
    end
    out[#out + 1] = r[1]; out[#out + 1] = r[2]; out[#out + 1] = r[3]; out[#out + 1] = r[4]
    out[#out + 1] = count and t or 0
    out[#out + 1] = r[8] or 0
  end
end
out[3] = lease_ms
-- One string, not an array: one reply object for the client to read
-- instead of one per number (hl_redis_call_parse). %d, not tostring or
-- table.concat: those write 14 significant digits, and a gcra mark (a TAT
-- in microseconds) has 16.
return string.format(string.rep('%d ', #out - 1) .. '%d', unpack(out))
