-- The brokerage's multi-statement transactions as PostgreSQL functions, for `oltplab run brokerage
-- --procedures`: each transaction is one call, one round trip (Broker-Volume and Market-Watch are
-- one statement each and go as they are). They do what the client-side transactions in tx.rs do,
-- statement for statement: the same rows read, locked and written in the same order, the same
-- values. Amounts are computed in cents (bigint), as there. The readers are STABLE: all their
-- statements read the call's one snapshot, as the client's READ ONLY transaction does, and they
-- cannot write — so a reader's call is sent alone, as an implicit transaction. Created (or
-- replaced) by every run that asks for them.

-- A missing row means an incomplete load; the message says so, as the client's does.
CREATE OR REPLACE FUNCTION oltplab_bk_missing(p_what text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is missing: the database does not hold a complete brokerage load; load it again', p_what;
END $$;

-- A tier's charge per trade and commission per 10,000 (tx.rs: charge_cents, commission_cents).
CREATE OR REPLACE FUNCTION oltplab_bk_charge(p_tier bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE p_tier WHEN 1 THEN 1000 WHEN 2 THEN 750 ELSE 500 END::bigint
$$;
CREATE OR REPLACE FUNCTION oltplab_bk_commission(p_tier bigint, p_value bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT p_value * CASE p_tier WHEN 1 THEN 40 WHEN 2 THEN 30 ELSE 20 END / 10000
$$;
-- The customer's tier from its id (mod.rs: tier_of).
CREATE OR REPLACE FUNCTION oltplab_bk_tier(p_c bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE mod(p_c * 625341585, 10) WHEN 0 THEN 1 WHEN 1 THEN 1 WHEN 8 THEN 3 WHEN 9 THEN 3 ELSE 2 END::bigint
$$;

-- Customer-Position: the customer (by tax id when p_by_tax = 1), its accounts' assets, and with
-- p_history = 1 the latest trades of one of them. Returns the number of accounts.
CREATE OR REPLACE FUNCTION oltplab_bk_customer_position(
    p_c bigint, p_by_tax int, p_history int, p_index int)
RETURNS int LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_c bigint := p_c;
    v_accounts bigint[];
    v_n int;
BEGIN
    IF p_by_tax = 1 THEN
        SELECT c_id INTO v_c FROM customer WHERE c_tax_id = 'TAX' || p_c;
        IF NOT FOUND THEN
            PERFORM oltplab_bk_missing('customer with tax id TAX' || p_c);
        END IF;
    END IF;
    PERFORM c_st_id, c_l_name, c_f_name, c_tier, c_dob, c_email FROM customer WHERE c_id = v_c;
    v_accounts := ARRAY(
        SELECT ca_id FROM customer_account
            LEFT JOIN holding_summary ON hs_ca_id = ca_id LEFT JOIN last_trade ON lt_s_symb = hs_s_symb
            WHERE ca_c_id = v_c GROUP BY ca_id, ca_bal
            ORDER BY COALESCE(SUM(hs_qty * lt_price), 0) ASC LIMIT 10);
    v_n := coalesce(array_length(v_accounts, 1), 0);
    IF v_n = 0 THEN
        PERFORM oltplab_bk_missing('the accounts of customer ' || v_c);
    END IF;
    IF p_history = 1 THEN
        PERFORM t.t_id, t.t_s_symb, t.t_qty, th_st_id, th_dts FROM (SELECT t_id, t_s_symb, t_qty, t_dts
            FROM trade WHERE t_ca_id = v_accounts[p_index % v_n + 1] ORDER BY t_dts DESC LIMIT 10) t
            JOIN trade_history ON th_t_id = t.t_id ORDER BY th_dts DESC LIMIT 30;
    END IF;
    RETURN v_n;
END $$;

-- Security-Detail: the security, p_days days of its market history from p_start, its last trade.
CREATE OR REPLACE FUNCTION oltplab_bk_security_detail(p_symb text, p_start int, p_days int)
RETURNS int LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM s_name, s_sector, s_industry, s_num_out, s_pe, s_dividend, s_yield, s_pad
        FROM security WHERE s_symb = p_symb;
    IF NOT FOUND THEN
        PERFORM oltplab_bk_missing('security ' || p_symb);
    END IF;
    PERFORM dm_date, dm_close, dm_high, dm_low, dm_vol FROM daily_market
        WHERE dm_s_symb = p_symb AND dm_date >= p_start ORDER BY dm_date LIMIT p_days;
    PERFORM lt_price, lt_open_price, lt_vol FROM last_trade WHERE lt_s_symb = p_symb;
    RETURN 1;
END $$;

-- Trade-Status: the account's 50 latest trades, and its customer's and broker's names.
CREATE OR REPLACE FUNCTION oltplab_bk_trade_status(p_account bigint)
RETURNS int LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM t_id, t_dts, t_st_id, t_tt_id, t_is_cash, t_s_symb, t_qty, t_exec_name, s_name
        FROM trade JOIN security ON s_symb = t_s_symb WHERE t_ca_id = p_account
        ORDER BY t_dts DESC LIMIT 50;
    PERFORM c_l_name, c_f_name, b_name FROM customer_account JOIN customer ON c_id = ca_c_id
        JOIN broker ON b_id = ca_b_id WHERE ca_id = p_account;
    IF NOT FOUND THEN
        PERFORM oltplab_bk_missing('account ' || p_account);
    END IF;
    RETURN 1;
END $$;

-- Trade-Lookup's and Trade-Update's trades. p_frame: 1 the trades p_ids, 2 an account's trades
-- from p_from to p_to, 3 a security's (at most 20).
CREATE OR REPLACE FUNCTION oltplab_bk_lookup_ids(
    p_frame int, p_ids bigint[], p_account bigint, p_symb text, p_from timestamp, p_to timestamp)
RETURNS bigint[] LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF p_frame = 1 THEN
        RETURN p_ids;
    ELSIF p_frame = 2 THEN
        RETURN ARRAY(SELECT t_id FROM trade
            WHERE t_ca_id = p_account AND t_dts >= p_from AND t_dts <= p_to ORDER BY t_dts LIMIT 20);
    END IF;
    RETURN ARRAY(SELECT t_id FROM trade
        WHERE t_s_symb = p_symb AND t_dts >= p_from AND t_dts <= p_to ORDER BY t_dts LIMIT 20);
END $$;

-- The trades' details, settlements, cash and history, as both transactions read them.
CREATE OR REPLACE FUNCTION oltplab_bk_lookup_details(p_ids bigint[])
RETURNS int LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM t_id, t_bid_price, t_exec_name, t_is_cash, t_trade_price, se_amt, se_cash_due_date,
            se_cash_type, ct_amt, ct_dts, ct_name
        FROM trade LEFT JOIN settlement ON se_t_id = t_id LEFT JOIN cash_transaction ON ct_t_id = t_id
        WHERE t_id = ANY(p_ids);
    PERFORM th_t_id, th_dts, th_st_id FROM trade_history WHERE th_t_id = ANY(p_ids)
        ORDER BY th_t_id, th_dts;
    RETURN coalesce(array_length(p_ids, 1), 0);
END $$;

-- Trade-Lookup: frames 1-3 as oltplab_bk_lookup_ids; 4 an account's first trade after p_from
-- and the holding history of its lots. Returns the number of trades looked at.
CREATE OR REPLACE FUNCTION oltplab_bk_trade_lookup(
    p_frame int, p_ids bigint[], p_account bigint, p_symb text, p_from timestamp, p_to timestamp)
RETURNS int LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_ids bigint[];
    v_t bigint;
BEGIN
    IF p_frame = 4 THEN
        SELECT t_id INTO v_t FROM trade WHERE t_ca_id = p_account AND t_dts >= p_from
            ORDER BY t_dts LIMIT 1;
        IF FOUND THEN
            PERFORM hh_h_t_id, hh_t_id, hh_before_qty, hh_after_qty FROM holding_history
                WHERE hh_h_t_id IN (SELECT hh_h_t_id FROM holding_history WHERE hh_t_id = v_t) LIMIT 20;
        END IF;
        RETURN 0;
    END IF;
    v_ids := oltplab_bk_lookup_ids(p_frame, p_ids, p_account, p_symb, p_from, p_to);
    IF coalesce(array_length(v_ids, 1), 0) = 0 THEN
        RETURN 0;
    END IF;
    RETURN oltplab_bk_lookup_details(v_ids);
END $$;

-- Trade-Update: Trade-Lookup's frames 1-3, changing a field of each trade found (TPC-E swaps
-- " X " and " " in the executor's name, the long and the short name of the cash type, and here a
-- suffix of the cash transaction's name), then reading them as Trade-Lookup does.
CREATE OR REPLACE FUNCTION oltplab_bk_trade_update(
    p_frame int, p_ids bigint[], p_account bigint, p_symb text, p_from timestamp, p_to timestamp)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_ids bigint[];
BEGIN
    v_ids := oltplab_bk_lookup_ids(p_frame, p_ids, p_account, p_symb, p_from, p_to);
    IF coalesce(array_length(v_ids, 1), 0) = 0 THEN
        RETURN 0;
    END IF;
    IF p_frame = 1 THEN
        UPDATE trade SET t_exec_name = CASE WHEN t_exec_name LIKE '% X %'
            THEN REPLACE(t_exec_name, ' X ', ' ') ELSE REPLACE(t_exec_name, ' ', ' X ') END
            WHERE t_id = ANY(v_ids);
    ELSIF p_frame = 2 THEN
        UPDATE settlement SET se_cash_type = CASE se_cash_type WHEN 'Cash Account' THEN 'Cash'
            WHEN 'Cash' THEN 'Cash Account' WHEN 'Margin' THEN 'Margin Account' ELSE 'Margin' END
            WHERE se_t_id = ANY(v_ids);
    ELSE
        UPDATE cash_transaction SET ct_name = CASE WHEN ct_name LIKE '% (updated)'
            THEN SUBSTR(ct_name, 1, LENGTH(ct_name) - 10) ELSE CONCAT(ct_name, ' (updated)') END
            WHERE ct_t_id = ANY(v_ids);
    END IF;
    RETURN oltplab_bk_lookup_details(v_ids);
END $$;

-- Trade-Order: trade p_t_id of p_qty shares for the account. A sell sells one of the holdings of
-- at least 100 shares (picked by p_pick in [0, 1)), or becomes a buy when there is none. A limit
-- order is set p_offset_bp basis points from the last price and waits in trade_request. With
-- p_roll_back = 1 it ends in the intended rollback (SQLSTATE OLRB1) after all its work. Returns
-- the trade type, security, quantity and last price (cents) it ordered at.
CREATE OR REPLACE FUNCTION oltplab_bk_trade_order(
    p_account bigint, p_symb text, p_tt text, p_qty bigint, p_is_cash int, p_lifo int,
    p_offset_bp bigint, p_pick float8, p_roll_back int, p_t_id bigint, p_now timestamp)
RETURNS TABLE (o_tt text, o_symb text, o_qty bigint, o_price bigint) LANGUAGE plpgsql AS $$
DECLARE
    v_broker bigint;
    v_customer bigint;
    v_tier bigint;
    v_exec text;
    v_tt text := p_tt;
    v_qty bigint := p_qty;
    v_symb text := p_symb;
    v_held_symb text[];
    v_held_qty bigint[];
    v_n int;
    v_r int;
    v_market boolean;
    v_price bigint;
    v_bid bigint;
    v_off bigint;
    v_comm bigint;
    v_status text;
BEGIN
    SELECT ca_b_id, ca_c_id INTO v_broker, v_customer FROM customer_account WHERE ca_id = p_account;
    IF NOT FOUND THEN
        PERFORM oltplab_bk_missing('account ' || p_account);
    END IF;
    SELECT c_tier INTO v_tier FROM customer WHERE c_id = v_customer;
    IF NOT FOUND THEN
        v_tier := oltplab_bk_tier(v_customer);
    END IF;
    SELECT b_name INTO v_exec FROM broker WHERE b_id = v_broker;
    IF NOT FOUND THEN
        v_exec := 'Broker';
    END IF;
    IF v_tt NOT IN ('TMB', 'TLB') THEN
        SELECT array_agg(hs_s_symb ORDER BY hs_s_symb), array_agg(hs_qty ORDER BY hs_s_symb)
            INTO v_held_symb, v_held_qty
            FROM holding_summary WHERE hs_ca_id = p_account AND hs_qty >= 100;
        v_n := coalesce(array_length(v_held_symb, 1), 0);
        IF v_n = 0 THEN
            v_tt := CASE WHEN v_tt IN ('TMB', 'TMS') THEN 'TMB' ELSE 'TLB' END;
        ELSE
            v_r := least(floor(p_pick * v_n)::int, v_n - 1) + 1;
            v_symb := v_held_symb[v_r];
            v_qty := least(v_qty, v_held_qty[v_r] / 100 * 100);
        END IF;
    END IF;
    v_market := v_tt IN ('TMB', 'TMS');
    SELECT (lt_price * 100)::bigint INTO v_price FROM security JOIN last_trade ON lt_s_symb = s_symb
        WHERE s_symb = v_symb;
    IF NOT FOUND THEN
        PERFORM oltplab_bk_missing('security ' || v_symb);
    END IF;
    -- The lots of the security the account holds, as TPC-E reads them to estimate the tax.
    PERFORM h_qty, h_price FROM holding WHERE h_ca_id = p_account AND h_s_symb = v_symb
        ORDER BY h_dts DESC;
    IF v_market THEN
        v_bid := v_price;
    ELSE
        -- A limit buy waits for the price to fall to the limit, a limit sell for it to rise, a
        -- stop-loss for it to fall.
        v_off := v_price * p_offset_bp / 10000;
        v_bid := greatest(CASE v_tt WHEN 'TLS' THEN v_price + v_off ELSE v_price - v_off END, 1);
    END IF;
    v_comm := oltplab_bk_commission(v_tier, v_bid * v_qty);
    v_status := CASE WHEN v_market THEN 'SBMT' ELSE 'PNDG' END;
    INSERT INTO trade (t_id, t_dts, t_st_id, t_tt_id, t_is_cash, t_s_symb, t_qty, t_bid_price, t_ca_id,
                       t_exec_name, t_trade_price, t_chrg, t_comm, t_tax, t_lifo)
        VALUES (p_t_id, p_now, v_status, v_tt, p_is_cash, v_symb, v_qty, v_bid / 100.0, p_account,
                v_exec, NULL, oltplab_bk_charge(v_tier) / 100.0, v_comm / 100.0, 0, p_lifo);
    IF NOT v_market THEN
        INSERT INTO trade_request (tr_t_id, tr_tt_id, tr_s_symb, tr_qty, tr_bid_price, tr_b_id)
            VALUES (p_t_id, v_tt, v_symb, v_qty, v_bid / 100.0, v_broker);
    END IF;
    INSERT INTO trade_history (th_t_id, th_dts, th_st_id) VALUES (p_t_id, p_now, v_status);
    IF p_roll_back = 1 THEN
        RAISE EXCEPTION USING ERRCODE = 'OLRB1', MESSAGE = 'Trade-Order''s intended rollback';
    END IF;
    RETURN QUERY SELECT v_tt, v_symb, v_qty, v_price;
END $$;

-- Trade-Result: trade p_t_id executes at p_price (cents). Closes lots on the other side (oldest
-- first, newest first for LIFO), opens one with the rest, updates the holding summary, completes
-- the trade, pays the broker, settles, moves the cash. Returns the trade's security and
-- quantity; no row when the trade was not submitted (completed already).
CREATE OR REPLACE FUNCTION oltplab_bk_trade_result(p_t_id bigint, p_price bigint, p_now timestamp)
RETURNS TABLE (o_symb text, o_qty bigint) LANGUAGE plpgsql AS $$
DECLARE
    v_account bigint;
    v_tt text;
    v_symb text;
    v_qty bigint;
    v_charge bigint;
    v_lifo boolean;
    v_cash boolean;
    v_status text;
    v_broker bigint;
    v_customer bigint;
    v_summary bigint;
    v_has_summary boolean;
    v_buy boolean;
    v_signed bigint;
    v_left bigint;
    v_lot_ids bigint[] := '{}';
    v_lot_qty bigint[] := '{}';
    v_n int;
    v_i int;
    v_take bigint;
    v_after bigint;
    v_value bigint;
    v_comm bigint;
    v_amount bigint;
    r record;
BEGIN
    SELECT t_ca_id, t_tt_id, t_s_symb, t_qty, (t_chrg * 100)::bigint, t_lifo = 1, t_is_cash = 1, t_st_id
        INTO v_account, v_tt, v_symb, v_qty, v_charge, v_lifo, v_cash, v_status
        FROM trade WHERE t_id = p_t_id FOR UPDATE;
    IF NOT FOUND THEN
        PERFORM oltplab_bk_missing('trade ' || p_t_id);
    END IF;
    IF v_status <> 'SBMT' THEN
        RETURN;
    END IF;
    SELECT ca_b_id, ca_c_id INTO v_broker, v_customer FROM customer_account WHERE ca_id = v_account;
    IF NOT FOUND THEN
        PERFORM oltplab_bk_missing('account ' || v_account);
    END IF;
    SELECT hs_qty INTO v_summary FROM holding_summary
        WHERE hs_ca_id = v_account AND hs_s_symb = v_symb FOR UPDATE;
    v_has_summary := FOUND;
    v_buy := v_tt IN ('TMB', 'TLB');
    v_signed := CASE WHEN v_buy THEN v_qty ELSE -v_qty END;
    FOR r IN SELECT h_t_id, h_qty FROM holding WHERE h_ca_id = v_account AND h_s_symb = v_symb
            ORDER BY h_dts ASC, h_t_id ASC FOR UPDATE LOOP
        v_lot_ids := v_lot_ids || r.h_t_id;
        v_lot_qty := v_lot_qty || r.h_qty::bigint;
    END LOOP;
    v_n := coalesce(array_length(v_lot_ids, 1), 0);
    v_left := v_signed;
    FOR j IN 1..v_n LOOP
        EXIT WHEN v_left = 0;
        v_i := CASE WHEN v_lifo THEN v_n + 1 - j ELSE j END;
        -- A lot on the other side of the trade is closed (in part).
        IF sign(v_lot_qty[v_i]) = -sign(v_left) THEN
            v_take := least(abs(v_lot_qty[v_i]), abs(v_left)) * sign(v_left);
            v_after := v_lot_qty[v_i] + v_take;
            INSERT INTO holding_history (hh_h_t_id, hh_t_id, hh_before_qty, hh_after_qty)
                VALUES (v_lot_ids[v_i], p_t_id, v_lot_qty[v_i], v_after);
            IF v_after = 0 THEN
                DELETE FROM holding WHERE h_t_id = v_lot_ids[v_i];
            ELSE
                UPDATE holding SET h_qty = v_after WHERE h_t_id = v_lot_ids[v_i];
            END IF;
            v_left := v_left - v_take;
        END IF;
    END LOOP;
    IF v_left <> 0 THEN
        INSERT INTO holding_history (hh_h_t_id, hh_t_id, hh_before_qty, hh_after_qty)
            VALUES (p_t_id, p_t_id, 0, v_left);
        INSERT INTO holding (h_t_id, h_ca_id, h_s_symb, h_dts, h_price, h_qty)
            VALUES (p_t_id, v_account, v_symb, p_now, p_price / 100.0, v_left);
    END IF;
    IF NOT v_has_summary THEN
        -- Two Trade-Results of one account and security may both find no summary: the second
        -- adds to the first's.
        INSERT INTO holding_summary (hs_ca_id, hs_s_symb, hs_qty) VALUES (v_account, v_symb, v_signed)
            ON CONFLICT (hs_ca_id, hs_s_symb) DO UPDATE SET hs_qty = holding_summary.hs_qty + excluded.hs_qty;
    ELSIF v_summary + v_signed = 0 THEN
        DELETE FROM holding_summary WHERE hs_ca_id = v_account AND hs_s_symb = v_symb;
    ELSE
        UPDATE holding_summary SET hs_qty = v_summary + v_signed
            WHERE hs_ca_id = v_account AND hs_s_symb = v_symb;
    END IF;
    v_value := p_price * v_qty;
    v_comm := oltplab_bk_commission(oltplab_bk_tier(v_customer), v_value);
    UPDATE trade SET t_comm = v_comm / 100.0, t_dts = p_now, t_st_id = 'CMPT', t_trade_price = p_price / 100.0
        WHERE t_id = p_t_id;
    INSERT INTO trade_history (th_t_id, th_dts, th_st_id) VALUES (p_t_id, p_now, 'CMPT');
    UPDATE broker SET b_comm_total = b_comm_total + v_comm / 100.0, b_num_trades = b_num_trades + 1
        WHERE b_id = v_broker;
    v_amount := CASE WHEN v_buy THEN -(v_value + v_charge + v_comm) ELSE v_value - v_charge - v_comm END;
    INSERT INTO settlement (se_t_id, se_cash_type, se_cash_due_date, se_amt)
        VALUES (p_t_id, CASE WHEN v_cash THEN 'Cash Account' ELSE 'Margin' END,
                (p_now::date - date '1970-01-01') + 2, v_amount / 100.0);
    IF v_cash THEN
        UPDATE customer_account SET ca_bal = ca_bal + v_amount / 100.0 WHERE ca_id = v_account;
        INSERT INTO cash_transaction (ct_t_id, ct_dts, ct_amt, ct_name)
            VALUES (p_t_id, p_now, v_amount / 100.0, v_tt || ' ' || v_qty || ' shares of ' || v_symb);
    END IF;
    PERFORM ca_bal FROM customer_account WHERE ca_id = v_account;
    RETURN QUERY SELECT v_symb, v_qty;
END $$;

-- Market-Feed: each tick (security, price in cents, quantity; the symbols comma-separated) moves
-- its last trade and submits the limit orders its price triggers. Returns each triggered trade,
-- its quantity and its tick's number (1-based).
CREATE OR REPLACE FUNCTION oltplab_bk_market_feed(
    p_symbs text, p_price bigint[], p_qty bigint[], p_now timestamp)
RETURNS TABLE (o_t_id bigint, o_qty bigint, o_tick int) LANGUAGE plpgsql AS $$
DECLARE
    v_symb text[] := string_to_array(p_symbs, ',');
    v_p numeric;
    v_ids bigint[];
    v_qtys bigint[];
    r record;
BEGIN
    FOR k IN 1..coalesce(array_length(v_symb, 1), 0) LOOP
        v_p := p_price[k] / 100.0;
        UPDATE last_trade SET lt_price = v_p, lt_vol = lt_vol + p_qty[k], lt_dts = p_now
            WHERE lt_s_symb = v_symb[k];
        v_ids := '{}';
        v_qtys := '{}';
        FOR r IN SELECT tr_t_id, tr_qty FROM trade_request WHERE tr_s_symb = v_symb[k] AND
                ((tr_tt_id = 'TSL' AND tr_bid_price >= v_p) OR (tr_tt_id = 'TLS' AND tr_bid_price <= v_p)
                 OR (tr_tt_id = 'TLB' AND tr_bid_price >= v_p)) ORDER BY tr_t_id FOR UPDATE LOOP
            v_ids := v_ids || r.tr_t_id;
            v_qtys := v_qtys || r.tr_qty::bigint;
        END LOOP;
        FOR j IN 1..coalesce(array_length(v_ids, 1), 0) LOOP
            UPDATE trade SET t_dts = p_now, t_st_id = 'SBMT' WHERE t_id = v_ids[j];
            DELETE FROM trade_request WHERE tr_t_id = v_ids[j];
            INSERT INTO trade_history (th_t_id, th_dts, th_st_id) VALUES (v_ids[j], p_now, 'SBMT');
            o_t_id := v_ids[j];
            o_qty := v_qtys[j];
            o_tick := k;
            RETURN NEXT;
        END LOOP;
    END LOOP;
END $$;
