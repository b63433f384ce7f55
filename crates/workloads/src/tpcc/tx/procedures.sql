-- TPC-C's five transactions as PostgreSQL functions, for `oltplab run tpcc --procedures`: each
-- transaction is one call, sent alone as an implicit transaction: one round trip, one answer.
-- They do what the client-side transactions in this directory do, statement for statement where
-- PL/pgSQL allows: the same rows read and written in the same order, the same values. The two
-- readers are STABLE: all their statements read the call's one snapshot, as the client's READ
-- ONLY transaction does, and they cannot write. Created (or replaced) by every run that asks for
-- them; `oltplab load tpcc --force` drops the tables, not these.

-- New-Order (spec 2.4). The lines' items, supplying warehouses and quantities come as arrays.
-- An unused item id is the intended rollback (2.4.2.3): the valid lines are written all the
-- same, then the transaction is rolled back by SQLSTATE OLRB1, which the driver counts as such.
CREATE OR REPLACE FUNCTION oltplab_tpcc_new_order(
    p_w int, p_d int, p_c int, p_item int[], p_supply int[], p_qty int[], p_now timestamp)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_o int;
    v_d_tax numeric;
    v_discount numeric;
    v_w_tax numeric;
    v_item int[];
    v_supply int[];
    v_qty int[];
    v_price numeric[];
    v_dist text[];
    v_info text;
    v_lines int;
    k int;
BEGIN
    UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w AND d_id = p_d
        RETURNING d_next_o_id - 1, d_tax INTO v_o, v_d_tax;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'the district is missing: the database does not hold a complete TPC-C load; load it again';
    END IF;
    SELECT c_discount, w_tax INTO v_discount, v_w_tax FROM customer, warehouse
        WHERE w_id = p_w AND c_w_id = w_id AND c_d_id = p_d AND c_id = p_c;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'the customer is missing: the database does not hold a complete TPC-C load; load it again';
    END IF;
    -- The lines whose item exists, in their order (the client numbers the valid lines 1..n too).
    SELECT array_agg(l.i ORDER BY l.n), array_agg(l.w ORDER BY l.n), array_agg(l.q ORDER BY l.n),
           array_agg(i_price ORDER BY l.n)
        INTO v_item, v_supply, v_qty, v_price
        FROM unnest(p_item, p_supply, p_qty) WITH ORDINALITY AS l(i, w, q, n)
        JOIN item ON i_id = l.i;
    v_lines := coalesce(array_length(v_item, 1), 0);
    IF v_lines = 0 THEN
        RAISE EXCEPTION USING ERRCODE = 'OLRB1', MESSAGE = 'New-Order''s intended rollback';
    END IF;
    INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
        VALUES (v_o, p_d, p_w, p_c, p_now, NULL, v_lines,
                (SELECT bool_and(s = p_w) FROM unnest(v_supply) AS s)::int);
    INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o, p_d, p_w);
    -- Stock rows in key order, so that concurrent New-Orders lock them in the same order; one
    -- line at a time, so that an item named twice from one warehouse changes its row twice.
    v_dist := array_fill(NULL::text, ARRAY[v_lines]);
    FOR k IN SELECT x.n FROM unnest(v_supply, v_item) WITH ORDINALITY AS x(w, i, n) ORDER BY x.w, x.i LOOP
        UPDATE stock SET
            s_quantity = CASE WHEN s_quantity >= v_qty[k] + 10 THEN s_quantity - v_qty[k]
                              ELSE s_quantity - v_qty[k] + 91 END,
            s_ytd = s_ytd + v_qty[k], s_order_cnt = s_order_cnt + 1,
            s_remote_cnt = s_remote_cnt + (v_supply[k] <> p_w)::int
            WHERE s_w_id = v_supply[k] AND s_i_id = v_item[k]
            RETURNING CASE p_d WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
                               WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06
                               WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09
                               ELSE s_dist_10 END
            INTO v_info;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'a stock row is missing: the database does not hold a complete TPC-C load; load it again';
        END IF;
        v_dist[k] := v_info;
    END LOOP;
    INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                            ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
        SELECT v_o, p_d, p_w, x.n, x.i, x.w, NULL, x.q, round(x.q * x.p, 2), x.info
        FROM unnest(v_item, v_supply, v_qty, v_price, v_dist) WITH ORDINALITY AS x(i, w, q, p, info, n);
    IF v_lines < array_length(p_item, 1) THEN
        RAISE EXCEPTION USING ERRCODE = 'OLRB1', MESSAGE = 'New-Order''s intended rollback';
    END IF;
    RETURN v_o;
END $$;

-- Payment (spec 2.5). The customer by id (p_c), or by last name (p_c NULL): the one in the
-- middle of those with the name, ordered by first name (2.5.2.2). Returns the customer's id.
CREATE OR REPLACE FUNCTION oltplab_tpcc_payment(
    p_w int, p_d int, p_c_w int, p_c_d int, p_c int, p_last text, p_amount numeric, p_now timestamp)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_c int := p_c;
    v_w_name text;
    v_d_name text;
    v_customer record;
BEGIN
    UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w
        RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip INTO v_customer;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'the warehouse is missing: the database does not hold a complete TPC-C load; load it again';
    END IF;
    v_w_name := v_customer.w_name;
    UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w AND d_id = p_d
        RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip INTO v_customer;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'the district is missing: the database does not hold a complete TPC-C load; load it again';
    END IF;
    v_d_name := v_customer.d_name;
    IF v_c IS NULL THEN
        SELECT (array_agg(c_id ORDER BY c_first))[(count(*) - 1) / 2 + 1] INTO v_c FROM customer
            WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_last = p_last;
        IF v_c IS NULL THEN
            RAISE EXCEPTION 'a customer last name is missing: the database does not hold a complete TPC-C load; load it again';
        END IF;
    END IF;
    UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
        c_payment_cnt = c_payment_cnt + 1,
        c_data = CASE WHEN c_credit = 'BC' THEN substr(
                     format('%s %s %s %s %s %s | ', v_c, p_c_d, p_c_w, p_d, p_w, p_amount::numeric(12, 2))
                     || c_data, 1, 500)
                 ELSE c_data END
        WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_id = v_c
        RETURNING c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
                  c_since, c_credit, c_credit_lim, c_discount, c_balance INTO v_customer;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'the customer is missing: the database does not hold a complete TPC-C load; load it again';
    END IF;
    INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
        VALUES (v_c, p_c_d, p_c_w, p_d, p_w, p_now, p_amount, v_w_name || '    ' || v_d_name);
    RETURN v_c;
END $$;

-- Order-Status (spec 2.6): the customer (by id, or by last name as Payment), the last order and
-- its lines, read. Returns the number of lines.
CREATE OR REPLACE FUNCTION oltplab_tpcc_order_status(p_w int, p_d int, p_c int, p_last text)
RETURNS int LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_c int := p_c;
    v_customer record;
    v_o int;
    v_lines int := 0;
BEGIN
    IF v_c IS NULL THEN
        SELECT (array_agg(c_id ORDER BY c_first))[(count(*) - 1) / 2 + 1] INTO v_c FROM customer
            WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last;
        IF v_c IS NULL THEN
            RAISE EXCEPTION 'a customer last name is missing: the database does not hold a complete TPC-C load; load it again';
        END IF;
    END IF;
    SELECT c_balance, c_first, c_middle, c_last INTO v_customer FROM customer
        WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = v_c;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'the customer is missing: the database does not hold a complete TPC-C load; load it again';
    END IF;
    SELECT o_id INTO v_o FROM orders WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = v_c
        ORDER BY o_id DESC LIMIT 1;
    IF v_o IS NOT NULL THEN
        SELECT count(*) INTO v_lines FROM (
            SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
            WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = v_o OFFSET 0) AS l;
    END IF;
    RETURN v_lines;
END $$;

-- Delivery (spec 2.7): each district's oldest new order, in district order. A district whose
-- oldest a concurrent Delivery took is looked at again; one with no undelivered order is
-- skipped (2.7.4.2). Returns the number of districts skipped.
CREATE OR REPLACE FUNCTION oltplab_tpcc_delivery(p_w int, p_carrier int, p_now timestamp)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_d int;
    v_o int;
    v_c int;
    v_total numeric;
    v_skipped int := 0;
    v_try int;
BEGIN
    FOR v_d IN 1..10 LOOP
        v_o := NULL;
        FOR v_try IN 0..100 LOOP
            DELETE FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d AND no_o_id =
                (SELECT min(no_o_id) FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d)
                RETURNING no_o_id INTO v_o;
            EXIT WHEN v_o IS NOT NULL;
            PERFORM 1 FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d LIMIT 1;
            EXIT WHEN NOT FOUND;
        END LOOP;
        IF v_o IS NULL THEN
            v_skipped := v_skipped + 1;
            CONTINUE;
        END IF;
        UPDATE orders SET o_carrier_id = p_carrier WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o
            RETURNING o_c_id INTO v_c;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'an order with a new-order row is missing: the database does not hold a complete TPC-C load; load it again';
        END IF;
        WITH l AS (
            UPDATE order_line SET ol_delivery_d = p_now WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o
            RETURNING ol_amount)
        SELECT coalesce(sum(ol_amount), 0) INTO v_total FROM l;
        UPDATE customer SET c_balance = c_balance + v_total, c_delivery_cnt = c_delivery_cnt + 1
            WHERE c_w_id = p_w AND c_d_id = v_d AND c_id = v_c;
    END LOOP;
    RETURN v_skipped;
END $$;

-- Stock-Level (spec 2.8): the items of the district's last 20 orders below the threshold.
CREATE OR REPLACE FUNCTION oltplab_tpcc_stock_level(p_w int, p_d int, p_threshold int)
RETURNS int LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_next int;
    v_count int;
BEGIN
    SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w AND d_id = p_d;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'the district is missing: the database does not hold a complete TPC-C load; load it again';
    END IF;
    SELECT count(DISTINCT s_i_id) INTO v_count FROM order_line, stock
        WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id < v_next AND ol_o_id >= v_next - 20
          AND s_w_id = p_w AND s_i_id = ol_i_id AND s_quantity < p_threshold;
    RETURN v_count;
END $$;
