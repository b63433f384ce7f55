-- The brokerage's multi-statement transactions as MariaDB stored procedures, for `oltplab run
-- brokerage --procedures`: each transaction is one CALL, sent with its COMMIT in one query
-- (Broker-Volume and Market-Watch are one statement each and go as they are). They do what the
-- client-side transactions in tx.rs do: the same rows read, locked (FOR UPDATE) and written in
-- the same order, the same values, amounts computed in cents as there. Rows the client reads and
-- drops are read here by COUNT(*) over the same query; a list of trades (Trade-Lookup's ids, a
-- sell's holdings) is walked by key, one row at a time. Each procedure ends with one result set:
-- what the client hands the market. Created (or replaced) by every run that asks for them.

CREATE OR REPLACE PROCEDURE oltplab_bk_missing(p_what VARCHAR(200))
BEGIN
    DECLARE v_message VARCHAR(300) DEFAULT CONCAT(p_what,
        ' is missing: the database does not hold a complete brokerage load; load it again');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_message;
END;

-- Customer-Position: the customer (by tax id when p_by_tax = 1), its accounts' assets, and with
-- p_history = 1 the latest trades of one of them. Returns the number of accounts.
CREATE OR REPLACE PROCEDURE oltplab_bk_customer_position(
    p_c BIGINT, p_by_tax INT, p_history INT, p_index INT)
BEGIN
    DECLARE v_c BIGINT DEFAULT p_c;
    DECLARE v_n INT DEFAULT 0;
    DECLARE v_accounts VARCHAR(1000);
    DECLARE v_account BIGINT;
    DECLARE v_rows INT;
    IF p_by_tax = 1 THEN
        SET v_c = NULL;
        SELECT c_id INTO v_c FROM customer WHERE c_tax_id = CONCAT('TAX', p_c);
        IF v_c IS NULL THEN
            CALL oltplab_bk_missing(CONCAT('customer with tax id TAX', p_c));
        END IF;
    END IF;
    SELECT COUNT(*) INTO v_rows FROM (SELECT c_st_id, c_l_name, c_f_name, c_tier, c_dob, c_email
        FROM customer WHERE c_id = v_c) AS x;
    SELECT COUNT(*), GROUP_CONCAT(a.ca_id ORDER BY a.assets, a.ca_id) INTO v_n, v_accounts FROM (
        SELECT ca_id, COALESCE(SUM(hs_qty * lt_price), 0) AS assets FROM customer_account
            LEFT JOIN holding_summary ON hs_ca_id = ca_id LEFT JOIN last_trade ON lt_s_symb = hs_s_symb
            WHERE ca_c_id = v_c GROUP BY ca_id, ca_bal ORDER BY 2 ASC LIMIT 10) AS a;
    IF v_n = 0 THEN
        CALL oltplab_bk_missing(CONCAT('the accounts of customer ', v_c));
    END IF;
    IF p_history = 1 THEN
        SET v_account = SUBSTRING_INDEX(SUBSTRING_INDEX(v_accounts, ',', p_index MOD v_n + 1), ',', -1);
        SELECT COUNT(*) INTO v_rows FROM (
            SELECT t.t_id, t.t_s_symb, t.t_qty, th_st_id, th_dts FROM (SELECT t_id, t_s_symb, t_qty, t_dts
                FROM trade WHERE t_ca_id = v_account ORDER BY t_dts DESC LIMIT 10) t
                JOIN trade_history ON th_t_id = t.t_id ORDER BY th_dts DESC LIMIT 30) AS h;
    END IF;
    SELECT v_n;
END;

-- Security-Detail: the security, p_days days of its market history from p_start, its last trade.
CREATE OR REPLACE PROCEDURE oltplab_bk_security_detail(p_symb VARCHAR(15), p_start INT, p_days INT)
BEGIN
    DECLARE v_rows INT;
    SELECT COUNT(*) INTO v_rows FROM (SELECT s_name, s_sector, s_industry, s_num_out, s_pe, s_dividend,
        s_yield, s_pad FROM security WHERE s_symb = p_symb) AS x;
    IF v_rows = 0 THEN
        CALL oltplab_bk_missing(CONCAT('security ', p_symb));
    END IF;
    SELECT COUNT(*) INTO v_rows FROM (SELECT dm_date, dm_close, dm_high, dm_low, dm_vol FROM daily_market
        WHERE dm_s_symb = p_symb AND dm_date >= p_start ORDER BY dm_date LIMIT p_days) AS x;
    SELECT COUNT(*) INTO v_rows FROM (SELECT lt_price, lt_open_price, lt_vol FROM last_trade
        WHERE lt_s_symb = p_symb) AS x;
    SELECT 1;
END;

-- Trade-Status: the account's 50 latest trades, and its customer's and broker's names.
CREATE OR REPLACE PROCEDURE oltplab_bk_trade_status(p_account BIGINT)
BEGIN
    DECLARE v_rows INT;
    SELECT COUNT(*) INTO v_rows FROM (SELECT t_id, t_dts, t_st_id, t_tt_id, t_is_cash, t_s_symb, t_qty,
        t_exec_name, s_name FROM trade JOIN security ON s_symb = t_s_symb WHERE t_ca_id = p_account
        ORDER BY t_dts DESC LIMIT 50) AS x;
    SELECT COUNT(*) INTO v_rows FROM (SELECT c_l_name, c_f_name, b_name FROM customer_account
        JOIN customer ON c_id = ca_c_id JOIN broker ON b_id = ca_b_id WHERE ca_id = p_account) AS x;
    IF v_rows = 0 THEN
        CALL oltplab_bk_missing(CONCAT('account ', p_account));
    END IF;
    SELECT 1;
END;

-- Trade-Lookup, and with p_update = 1 Trade-Update. p_frame: 1 the trades p_ids (a JSON array),
-- 2 an account's trades from p_from to p_to, 3 a security's (at most 20), 4 an account's first
-- trade after p_from and the holding history of its lots. Trade-Update changes a field of each
-- trade found (TPC-E swaps " X " and " " in the executor's name, the long and the short name of
-- the cash type, and here a suffix of the cash transaction's name). Returns the trades looked at.
CREATE OR REPLACE PROCEDURE oltplab_bk_trade_lookup(
    p_frame INT, p_ids TEXT, p_account BIGINT, p_symb VARCHAR(15), p_from DATETIME(6),
    p_to DATETIME(6), p_update INT)
proc: BEGIN
    DECLARE v_ids TEXT DEFAULT p_ids;
    DECLARE v_n INT;
    DECLARE v_k INT DEFAULT 0;
    DECLARE v_t BIGINT;
    DECLARE v_rows INT;
    IF p_frame = 2 THEN
        SELECT JSON_ARRAYAGG(x.t_id) INTO v_ids FROM (SELECT t_id FROM trade
            WHERE t_ca_id = p_account AND t_dts >= p_from AND t_dts <= p_to ORDER BY t_dts LIMIT 20) AS x;
    ELSEIF p_frame = 3 THEN
        SELECT JSON_ARRAYAGG(x.t_id) INTO v_ids FROM (SELECT t_id FROM trade
            WHERE t_s_symb = p_symb AND t_dts >= p_from AND t_dts <= p_to ORDER BY t_dts LIMIT 20) AS x;
    ELSEIF p_frame = 4 THEN
        SELECT t_id INTO v_t FROM trade WHERE t_ca_id = p_account AND t_dts >= p_from
            ORDER BY t_dts LIMIT 1;
        IF v_t IS NOT NULL THEN
            SELECT COUNT(*) INTO v_rows FROM (SELECT hh_h_t_id, hh_t_id, hh_before_qty, hh_after_qty
                FROM holding_history WHERE hh_h_t_id IN (SELECT hh_h_t_id FROM holding_history
                WHERE hh_t_id = v_t) LIMIT 20) AS x;
        END IF;
        SELECT 0;
        LEAVE proc;
    END IF;
    SET v_n = COALESCE(JSON_LENGTH(v_ids), 0);
    IF p_update = 1 THEN
        WHILE v_k < v_n DO
            SET v_t = JSON_VALUE(v_ids, CONCAT('$[', v_k, ']'));
            IF p_frame = 1 THEN
                UPDATE trade SET t_exec_name = CASE WHEN t_exec_name LIKE '% X %'
                    THEN REPLACE(t_exec_name, ' X ', ' ') ELSE REPLACE(t_exec_name, ' ', ' X ') END
                    WHERE t_id = v_t;
            ELSEIF p_frame = 2 THEN
                UPDATE settlement SET se_cash_type = CASE se_cash_type WHEN 'Cash Account' THEN 'Cash'
                    WHEN 'Cash' THEN 'Cash Account' WHEN 'Margin' THEN 'Margin Account' ELSE 'Margin' END
                    WHERE se_t_id = v_t;
            ELSE
                UPDATE cash_transaction SET ct_name = CASE WHEN ct_name LIKE '% (updated)'
                    THEN SUBSTR(ct_name, 1, LENGTH(ct_name) - 10) ELSE CONCAT(ct_name, ' (updated)') END
                    WHERE ct_t_id = v_t;
            END IF;
            SET v_k = v_k + 1;
        END WHILE;
    END IF;
    SET v_k = 0;
    WHILE v_k < v_n DO
        SET v_t = JSON_VALUE(v_ids, CONCAT('$[', v_k, ']'));
        SELECT COUNT(*) INTO v_rows FROM (SELECT t_id, t_bid_price, t_exec_name, t_is_cash, t_trade_price,
            se_amt, se_cash_due_date, se_cash_type, ct_amt, ct_dts, ct_name FROM trade
            LEFT JOIN settlement ON se_t_id = t_id LEFT JOIN cash_transaction ON ct_t_id = t_id
            WHERE t_id = v_t) AS x;
        SELECT COUNT(*) INTO v_rows FROM (SELECT th_t_id, th_dts, th_st_id FROM trade_history
            WHERE th_t_id = v_t) AS x;
        SET v_k = v_k + 1;
    END WHILE;
    SELECT v_n;
END;

-- Trade-Order: trade p_t_id of p_qty shares for the account. A sell sells one of the holdings of
-- at least 100 shares (the one p_pick in [0, 1) picks in symbol order; counted, then read by its
-- rank), or becomes a buy when there is none. A limit order is set p_offset_bp basis points from
-- the last price and waits in trade_request. With p_roll_back = 1 it ends in the intended
-- rollback (SQLSTATE OLRB1, before the query's COMMIT) after all its work. Returns the trade
-- type, security, quantity and last price (cents) it ordered at.
CREATE OR REPLACE PROCEDURE oltplab_bk_trade_order(
    p_account BIGINT, p_symb VARCHAR(15), p_tt CHAR(3), p_qty BIGINT, p_is_cash INT, p_lifo INT,
    p_offset_bp BIGINT, p_pick DOUBLE, p_roll_back INT, p_t_id BIGINT, p_now DATETIME(6))
BEGIN
    DECLARE v_broker BIGINT;
    DECLARE v_customer BIGINT;
    DECLARE v_tier BIGINT;
    DECLARE v_exec VARCHAR(49);
    DECLARE v_tt CHAR(3) DEFAULT p_tt;
    DECLARE v_qty BIGINT DEFAULT p_qty;
    DECLARE v_symb VARCHAR(15) DEFAULT p_symb;
    DECLARE v_held_qty BIGINT;
    DECLARE v_n INT;
    DECLARE v_r INT;
    DECLARE v_market INT;
    DECLARE v_price BIGINT;
    DECLARE v_bid BIGINT;
    DECLARE v_off BIGINT;
    DECLARE v_comm BIGINT;
    DECLARE v_status CHAR(4);
    DECLARE v_rows INT;
    SELECT ca_b_id, ca_c_id INTO v_broker, v_customer FROM customer_account WHERE ca_id = p_account;
    IF v_customer IS NULL THEN
        CALL oltplab_bk_missing(CONCAT('account ', p_account));
    END IF;
    SELECT c_tier INTO v_tier FROM customer WHERE c_id = v_customer;
    IF v_tier IS NULL THEN
        SET v_tier = CASE MOD(v_customer * 625341585, 10) WHEN 0 THEN 1 WHEN 1 THEN 1 WHEN 8 THEN 3
            WHEN 9 THEN 3 ELSE 2 END;
    END IF;
    SELECT b_name INTO v_exec FROM broker WHERE b_id = v_broker;
    IF v_exec IS NULL THEN
        SET v_exec = 'Broker';
    END IF;
    IF v_tt NOT IN ('TMB', 'TLB') THEN
        SELECT COUNT(*) INTO v_n FROM holding_summary WHERE hs_ca_id = p_account AND hs_qty >= 100;
        IF v_n = 0 THEN
            SET v_tt = IF(v_tt IN ('TMB', 'TMS'), 'TMB', 'TLB');
        ELSE
            SET v_r = LEAST(FLOOR(p_pick * v_n), v_n - 1);
            SELECT hs_s_symb, hs_qty INTO v_symb, v_held_qty FROM holding_summary
                WHERE hs_ca_id = p_account AND hs_qty >= 100 ORDER BY hs_s_symb LIMIT v_r, 1;
            SET v_qty = LEAST(v_qty, v_held_qty DIV 100 * 100);
        END IF;
    END IF;
    SET v_market = v_tt IN ('TMB', 'TMS');
    SELECT CAST(lt_price * 100 AS SIGNED) INTO v_price FROM security JOIN last_trade ON lt_s_symb = s_symb
        WHERE s_symb = v_symb;
    IF v_price IS NULL THEN
        CALL oltplab_bk_missing(CONCAT('security ', v_symb));
    END IF;
    -- The lots of the security the account holds, as TPC-E reads them to estimate the tax.
    SELECT COUNT(*) INTO v_rows FROM (SELECT h_qty, h_price FROM holding
        WHERE h_ca_id = p_account AND h_s_symb = v_symb ORDER BY h_dts DESC) AS x;
    IF v_market THEN
        SET v_bid = v_price;
    ELSE
        -- A limit buy waits for the price to fall to the limit, a limit sell for it to rise, a
        -- stop-loss for it to fall.
        SET v_off = v_price * p_offset_bp DIV 10000;
        SET v_bid = GREATEST(IF(v_tt = 'TLS', v_price + v_off, v_price - v_off), 1);
    END IF;
    SET v_comm = v_bid * v_qty * CASE v_tier WHEN 1 THEN 40 WHEN 2 THEN 30 ELSE 20 END DIV 10000;
    SET v_status = IF(v_market, 'SBMT', 'PNDG');
    INSERT INTO trade (t_id, t_dts, t_st_id, t_tt_id, t_is_cash, t_s_symb, t_qty, t_bid_price, t_ca_id,
                       t_exec_name, t_trade_price, t_chrg, t_comm, t_tax, t_lifo)
        VALUES (p_t_id, p_now, v_status, v_tt, p_is_cash, v_symb, v_qty, v_bid / 100, p_account,
                v_exec, NULL, CASE v_tier WHEN 1 THEN 1000 WHEN 2 THEN 750 ELSE 500 END / 100,
                v_comm / 100, 0, p_lifo);
    IF NOT v_market THEN
        INSERT INTO trade_request (tr_t_id, tr_tt_id, tr_s_symb, tr_qty, tr_bid_price, tr_b_id)
            VALUES (p_t_id, v_tt, v_symb, v_qty, v_bid / 100, v_broker);
    END IF;
    INSERT INTO trade_history (th_t_id, th_dts, th_st_id) VALUES (p_t_id, p_now, v_status);
    IF p_roll_back = 1 THEN
        SIGNAL SQLSTATE 'OLRB1' SET MESSAGE_TEXT = 'Trade-Order''s intended rollback';
    END IF;
    SELECT v_tt, v_symb, v_qty, v_price;
END;

-- Trade-Result: trade p_t_id executes at p_price (cents). Closes lots on the other side (oldest
-- first, newest first for LIFO; all locked oldest first), opens one with the rest, updates the
-- holding summary, completes the trade, pays the broker, settles, moves the cash. Returns the
-- trade's security and quantity; no row when the trade was not submitted (completed already).
CREATE OR REPLACE PROCEDURE oltplab_bk_trade_result(p_t_id BIGINT, p_price BIGINT, p_now DATETIME(6))
proc: BEGIN
    DECLARE v_account BIGINT;
    DECLARE v_tt CHAR(3);
    DECLARE v_symb VARCHAR(15);
    DECLARE v_qty BIGINT;
    DECLARE v_charge BIGINT;
    DECLARE v_lifo INT;
    DECLARE v_cash INT;
    DECLARE v_status CHAR(4);
    DECLARE v_broker BIGINT;
    DECLARE v_customer BIGINT;
    DECLARE v_summary BIGINT;
    DECLARE v_buy INT;
    DECLARE v_signed BIGINT;
    DECLARE v_left BIGINT;
    DECLARE v_lots TEXT DEFAULT '[]';
    DECLARE v_n INT DEFAULT 0;
    DECLARE v_j INT DEFAULT 0;
    DECLARE v_i INT;
    DECLARE v_lot BIGINT;
    DECLARE v_lot_qty BIGINT;
    DECLARE v_take BIGINT;
    DECLARE v_after BIGINT;
    DECLARE v_value BIGINT;
    DECLARE v_comm BIGINT;
    DECLARE v_amount BIGINT;
    DECLARE v_done INT DEFAULT 0;
    DECLARE lots CURSOR FOR SELECT h_t_id, h_qty FROM holding WHERE h_ca_id = v_account
        AND h_s_symb = v_symb ORDER BY h_dts ASC, h_t_id ASC FOR UPDATE;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = 1;

    SELECT t_ca_id, t_tt_id, t_s_symb, t_qty, CAST(t_chrg * 100 AS SIGNED), t_lifo, t_is_cash, t_st_id
        INTO v_account, v_tt, v_symb, v_qty, v_charge, v_lifo, v_cash, v_status
        FROM trade WHERE t_id = p_t_id FOR UPDATE;
    IF v_account IS NULL THEN
        CALL oltplab_bk_missing(CONCAT('trade ', p_t_id));
    END IF;
    IF v_status <> 'SBMT' THEN
        SELECT v_symb, v_qty FROM DUAL WHERE FALSE;
        LEAVE proc;
    END IF;
    SELECT ca_b_id, ca_c_id INTO v_broker, v_customer FROM customer_account WHERE ca_id = v_account;
    IF v_customer IS NULL THEN
        CALL oltplab_bk_missing(CONCAT('account ', v_account));
    END IF;
    SELECT hs_qty INTO v_summary FROM holding_summary
        WHERE hs_ca_id = v_account AND hs_s_symb = v_symb FOR UPDATE;
    SET v_done = 0;
    SET v_buy = v_tt IN ('TMB', 'TLB');
    SET v_signed = IF(v_buy, v_qty, -v_qty);
    OPEN lots;
    read_lots: LOOP
        FETCH lots INTO v_lot, v_lot_qty;
        IF v_done THEN
            LEAVE read_lots;
        END IF;
        SET v_lots = JSON_ARRAY_APPEND(v_lots, '$', JSON_ARRAY(v_lot, v_lot_qty));
        SET v_n = v_n + 1;
    END LOOP;
    CLOSE lots;
    SET v_left = v_signed;
    WHILE v_j < v_n AND v_left <> 0 DO
        SET v_i = IF(v_lifo = 1, v_n - 1 - v_j, v_j);
        SET v_lot = JSON_VALUE(v_lots, CONCAT('$[', v_i, '][0]'));
        SET v_lot_qty = JSON_VALUE(v_lots, CONCAT('$[', v_i, '][1]'));
        -- A lot on the other side of the trade is closed (in part).
        IF SIGN(v_lot_qty) = -SIGN(v_left) THEN
            SET v_take = LEAST(ABS(v_lot_qty), ABS(v_left)) * SIGN(v_left);
            SET v_after = v_lot_qty + v_take;
            INSERT INTO holding_history (hh_h_t_id, hh_t_id, hh_before_qty, hh_after_qty)
                VALUES (v_lot, p_t_id, v_lot_qty, v_after);
            IF v_after = 0 THEN
                DELETE FROM holding WHERE h_t_id = v_lot;
            ELSE
                UPDATE holding SET h_qty = v_after WHERE h_t_id = v_lot;
            END IF;
            SET v_left = v_left - v_take;
        END IF;
        SET v_j = v_j + 1;
    END WHILE;
    IF v_left <> 0 THEN
        INSERT INTO holding_history (hh_h_t_id, hh_t_id, hh_before_qty, hh_after_qty)
            VALUES (p_t_id, p_t_id, 0, v_left);
        INSERT INTO holding (h_t_id, h_ca_id, h_s_symb, h_dts, h_price, h_qty)
            VALUES (p_t_id, v_account, v_symb, p_now, p_price / 100, v_left);
    END IF;
    IF v_summary IS NULL THEN
        -- Two Trade-Results of one account and security may both find no summary: the second
        -- adds to the first's.
        INSERT INTO holding_summary (hs_ca_id, hs_s_symb, hs_qty) VALUES (v_account, v_symb, v_signed)
            ON DUPLICATE KEY UPDATE hs_qty = hs_qty + VALUES(hs_qty);
    ELSEIF v_summary + v_signed = 0 THEN
        DELETE FROM holding_summary WHERE hs_ca_id = v_account AND hs_s_symb = v_symb;
    ELSE
        UPDATE holding_summary SET hs_qty = v_summary + v_signed
            WHERE hs_ca_id = v_account AND hs_s_symb = v_symb;
    END IF;
    SET v_value = p_price * v_qty;
    SET v_comm = v_value * CASE MOD(v_customer * 625341585, 10) WHEN 0 THEN 40 WHEN 1 THEN 40
        WHEN 8 THEN 20 WHEN 9 THEN 20 ELSE 30 END DIV 10000;
    UPDATE trade SET t_comm = v_comm / 100, t_dts = p_now, t_st_id = 'CMPT', t_trade_price = p_price / 100
        WHERE t_id = p_t_id;
    INSERT INTO trade_history (th_t_id, th_dts, th_st_id) VALUES (p_t_id, p_now, 'CMPT');
    UPDATE broker SET b_comm_total = b_comm_total + v_comm / 100, b_num_trades = b_num_trades + 1
        WHERE b_id = v_broker;
    SET v_amount = IF(v_buy, -(v_value + v_charge + v_comm), v_value - v_charge - v_comm);
    INSERT INTO settlement (se_t_id, se_cash_type, se_cash_due_date, se_amt)
        VALUES (p_t_id, IF(v_cash = 1, 'Cash Account', 'Margin'), DATEDIFF(p_now, '1970-01-01') + 2,
                v_amount / 100);
    IF v_cash = 1 THEN
        UPDATE customer_account SET ca_bal = ca_bal + v_amount / 100 WHERE ca_id = v_account;
        INSERT INTO cash_transaction (ct_t_id, ct_dts, ct_amt, ct_name)
            VALUES (p_t_id, p_now, v_amount / 100, CONCAT(v_tt, ' ', v_qty, ' shares of ', v_symb));
    END IF;
    SELECT COUNT(*) INTO v_n FROM (SELECT ca_bal FROM customer_account WHERE ca_id = v_account) AS x;
    SELECT v_symb, v_qty;
END;

-- Market-Feed: each tick (a JSON array of [security, price in cents, quantity]) moves its last
-- trade and submits the limit orders its price triggers. Returns each triggered trade, its
-- quantity and its tick's number (1-based).
CREATE OR REPLACE PROCEDURE oltplab_bk_market_feed(p_ticks TEXT, p_now DATETIME(6))
BEGIN
    DECLARE v_n INT DEFAULT JSON_LENGTH(p_ticks);
    DECLARE v_k INT DEFAULT 0;
    DECLARE v_symb VARCHAR(15);
    DECLARE v_p DECIMAL(8,2);
    DECLARE v_qty BIGINT;
    DECLARE v_t BIGINT;
    DECLARE v_t_qty BIGINT;
    DECLARE v_found TEXT;
    DECLARE v_m INT;
    DECLARE v_j INT;
    DECLARE v_out TEXT DEFAULT '[]';
    DECLARE v_done INT DEFAULT 0;
    DECLARE requests CURSOR FOR SELECT tr_t_id, tr_qty FROM trade_request WHERE tr_s_symb = v_symb AND
        ((tr_tt_id = 'TSL' AND tr_bid_price >= v_p) OR (tr_tt_id = 'TLS' AND tr_bid_price <= v_p)
         OR (tr_tt_id = 'TLB' AND tr_bid_price >= v_p)) ORDER BY tr_t_id FOR UPDATE;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = 1;
    WHILE v_k < v_n DO
        SET v_symb = JSON_VALUE(p_ticks, CONCAT('$[', v_k, '][0]'));
        SET v_p = JSON_VALUE(p_ticks, CONCAT('$[', v_k, '][1]')) / 100;
        SET v_qty = JSON_VALUE(p_ticks, CONCAT('$[', v_k, '][2]'));
        UPDATE last_trade SET lt_price = v_p, lt_vol = lt_vol + v_qty, lt_dts = p_now
            WHERE lt_s_symb = v_symb;
        SET v_found = '[]';
        SET v_m = 0;
        SET v_done = 0;
        OPEN requests;
        read_requests: LOOP
            FETCH requests INTO v_t, v_t_qty;
            IF v_done THEN
                LEAVE read_requests;
            END IF;
            SET v_found = JSON_ARRAY_APPEND(v_found, '$', JSON_ARRAY(v_t, v_t_qty));
            SET v_m = v_m + 1;
        END LOOP;
        CLOSE requests;
        SET v_j = 0;
        WHILE v_j < v_m DO
            SET v_t = JSON_VALUE(v_found, CONCAT('$[', v_j, '][0]'));
            SET v_t_qty = JSON_VALUE(v_found, CONCAT('$[', v_j, '][1]'));
            UPDATE trade SET t_dts = p_now, t_st_id = 'SBMT' WHERE t_id = v_t;
            DELETE FROM trade_request WHERE tr_t_id = v_t;
            INSERT INTO trade_history (th_t_id, th_dts, th_st_id) VALUES (v_t, p_now, 'SBMT');
            SET v_out = JSON_ARRAY_APPEND(v_out, '$', JSON_ARRAY(v_t, v_t_qty, v_k + 1));
            SET v_j = v_j + 1;
        END WHILE;
        SET v_k = v_k + 1;
    END WHILE;
    SELECT o.t_id, o.qty, o.tick FROM JSON_TABLE(v_out, '$[*]' COLUMNS (t_id BIGINT PATH '$[0]',
        qty BIGINT PATH '$[1]', tick INT PATH '$[2]')) AS o;
END;
