-- TPC-C's five transactions as MariaDB stored procedures, for `oltplab run tpcc --procedures`:
-- each transaction is one CALL, sent with its COMMIT in one query. They do what the MariaDB
-- client-side transactions in this directory do: locking reads (FOR UPDATE) before each write,
-- stock rows in key order, the same values. Each ends with a one-row result (the order id,
-- the customer id, the line count, the districts skipped, the stock count). Created (or
-- replaced) by every run that asks for them; `oltplab load tpcc --force` drops the tables only.

-- New-Order (spec 2.4). The lines come as one JSON array of [item, supplying warehouse,
-- quantity]. An unused item id is the intended rollback (2.4.2.3): the valid lines are written
-- all the same, then SQLSTATE OLRB1 stops the query before its COMMIT and the driver rolls back.
CREATE OR REPLACE PROCEDURE oltplab_tpcc_new_order(
    p_w INT, p_d INT, p_c INT, p_lines TEXT, p_now DATETIME(6))
BEGIN
    DECLARE v_o INT;
    DECLARE v_discount DECIMAL(4,4);
    DECLARE v_w_tax DECIMAL(4,4);
    DECLARE v_asked INT DEFAULT JSON_LENGTH(p_lines);
    DECLARE v_lines INT DEFAULT 0;
    DECLARE v_all_local INT DEFAULT 1;
    DECLARE v_valid TEXT DEFAULT '[]';
    DECLARE v_k INT DEFAULT 0;
    DECLARE v_n INT;
    DECLARE v_i INT;
    DECLARE v_sw INT;
    DECLARE v_q INT;
    DECLARE v_price DECIMAL(5,2);
    DECLARE v_info CHAR(24);
    DECLARE v_done INT DEFAULT 0;
    -- The valid lines (numbered in their order) visited in stock key order, so that concurrent
    -- New-Orders lock stock rows in the same order. The lines' items are looked up one by one
    -- by their key below, whatever the statistics say: a join of the lines' JSON_TABLE with
    -- item was planned as a scan of item while InnoDB's statistics were stale.
    DECLARE line_cursor CURSOR FOR
        SELECT l.num, l.i, l.w, l.q, l.price
        FROM JSON_TABLE(v_valid, '$[*]' COLUMNS (num INT PATH '$[0]', i INT PATH '$[1]',
                 w INT PATH '$[2]', q INT PATH '$[3]', price DECIMAL(5,2) PATH '$[4]')) AS l
        ORDER BY l.w, l.i;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = 1;

    UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w AND d_id = p_d;
    IF ROW_COUNT() = 0 THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'the district is missing: the database does not hold a complete TPC-C load; load it again';
    END IF;
    SELECT d_next_o_id - 1, c_discount, w_tax INTO v_o, v_discount, v_w_tax
        FROM district, customer, warehouse
        WHERE d_w_id = p_w AND d_id = p_d AND w_id = d_w_id AND c_w_id = d_w_id AND c_d_id = d_id
          AND c_id = p_c;
    IF v_discount IS NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'the customer is missing: the database does not hold a complete TPC-C load; load it again';
    END IF;
    -- Each line's item by its key; the lines whose item exists are kept, numbered 1..n.
    WHILE v_k < v_asked DO
        SET v_i = JSON_VALUE(p_lines, CONCAT('$[', v_k, '][0]'));
        SET v_sw = JSON_VALUE(p_lines, CONCAT('$[', v_k, '][1]'));
        SET v_q = JSON_VALUE(p_lines, CONCAT('$[', v_k, '][2]'));
        SET v_price = NULL;
        SELECT i_price INTO v_price FROM item WHERE i_id = v_i;
        IF v_price IS NOT NULL THEN
            SET v_lines = v_lines + 1;
            IF v_sw <> p_w THEN
                SET v_all_local = 0;
            END IF;
            SET v_valid = JSON_ARRAY_APPEND(v_valid, '$', JSON_ARRAY(v_lines, v_i, v_sw, v_q, v_price));
        END IF;
        SET v_k = v_k + 1;
    END WHILE;
    IF v_lines = 0 THEN
        SIGNAL SQLSTATE 'OLRB1' SET MESSAGE_TEXT = 'New-Order''s intended rollback';
    END IF;
    INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
        VALUES (v_o, p_d, p_w, p_c, p_now, NULL, v_lines, v_all_local);
    INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o, p_d, p_w);
    SET v_done = 0;
    OPEN line_cursor;
    each_line: LOOP
        FETCH line_cursor INTO v_n, v_i, v_sw, v_q, v_price;
        IF v_done THEN
            LEAVE each_line;
        END IF;
        SET v_info = NULL;
        SELECT CASE p_d WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
                        WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06
                        WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09
                        ELSE s_dist_10 END
            INTO v_info FROM stock WHERE s_w_id = v_sw AND s_i_id = v_i FOR UPDATE;
        IF v_info IS NULL THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'a stock row is missing: the database does not hold a complete TPC-C load; load it again';
        END IF;
        UPDATE stock SET
            s_quantity = CASE WHEN s_quantity >= v_q + 10 THEN s_quantity - v_q ELSE s_quantity - v_q + 91 END,
            s_ytd = s_ytd + v_q, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + (v_sw <> p_w)
            WHERE s_w_id = v_sw AND s_i_id = v_i;
        INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                                ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
            VALUES (v_o, p_d, p_w, v_n, v_i, v_sw, NULL, v_q, ROUND(v_q * v_price, 2), v_info);
    END LOOP;
    CLOSE line_cursor;
    IF v_lines < v_asked THEN
        SIGNAL SQLSTATE 'OLRB1' SET MESSAGE_TEXT = 'New-Order''s intended rollback';
    END IF;
    SELECT v_o;
END;

-- Payment (spec 2.5). The customer by id (p_c), or by last name (p_c NULL): the one in the
-- middle of those with the name, ordered by first name (2.5.2.2).
CREATE OR REPLACE PROCEDURE oltplab_tpcc_payment(
    p_w INT, p_d INT, p_c_w INT, p_c_d INT, p_c INT, p_last VARCHAR(16), p_amount DECIMAL(6,2),
    p_now DATETIME(6))
BEGIN
    DECLARE v_c INT DEFAULT p_c;
    DECLARE v_n INT;
    DECLARE v_middle INT;
    DECLARE v_w_name VARCHAR(10);
    DECLARE v_d_name VARCHAR(10);
    DECLARE v_balance DECIMAL(12,2);

    -- The updates lock both rows; one read then sees both changed.
    UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w;
    UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w AND d_id = p_d;
    SELECT w_name, d_name INTO v_w_name, v_d_name FROM warehouse, district
        WHERE w_id = p_w AND d_w_id = w_id AND d_id = p_d;
    IF v_w_name IS NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'the warehouse or the district is missing: the database does not hold a complete TPC-C load; load it again';
    END IF;
    IF v_c IS NULL THEN
        SELECT COUNT(*) INTO v_n FROM customer WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_last = p_last;
        IF v_n = 0 THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'a customer last name is missing: the database does not hold a complete TPC-C load; load it again';
        END IF;
        SET v_middle = (v_n - 1) DIV 2;
        SELECT c_id INTO v_c FROM customer WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_last = p_last
            ORDER BY c_first LIMIT v_middle, 1;
    END IF;
    SELECT c_balance INTO v_balance FROM customer
        WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_id = v_c FOR UPDATE;
    IF v_balance IS NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'the customer is missing: the database does not hold a complete TPC-C load; load it again';
    END IF;
    UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
        c_payment_cnt = c_payment_cnt + 1,
        c_data = CASE WHEN c_credit = 'BC'
                      THEN SUBSTR(CONCAT(CONCAT_WS(' ', v_c, p_c_d, p_c_w, p_d, p_w, p_amount), ' | ', c_data), 1, 500)
                      ELSE c_data END
        WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_id = v_c;
    INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
        VALUES (v_c, p_c_d, p_c_w, p_d, p_w, p_now, p_amount, CONCAT(v_w_name, '    ', v_d_name));
    SELECT v_c;
END;

-- Order-Status (spec 2.6): the customer (by id, or by last name as Payment), the last order and
-- its lines, read.
CREATE OR REPLACE PROCEDURE oltplab_tpcc_order_status(p_w INT, p_d INT, p_c INT, p_last VARCHAR(16))
BEGIN
    DECLARE v_c INT DEFAULT p_c;
    DECLARE v_n INT;
    DECLARE v_middle INT;
    DECLARE v_balance DECIMAL(12,2);
    DECLARE v_o INT;
    DECLARE v_lines INT DEFAULT 0;

    IF v_c IS NULL THEN
        SELECT COUNT(*) INTO v_n FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last;
        IF v_n = 0 THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'a customer last name is missing: the database does not hold a complete TPC-C load; load it again';
        END IF;
        SET v_middle = (v_n - 1) DIV 2;
        SELECT c_id INTO v_c FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last
            ORDER BY c_first LIMIT v_middle, 1;
    END IF;
    SELECT c_balance INTO v_balance FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = v_c;
    IF v_balance IS NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'the customer is missing: the database does not hold a complete TPC-C load; load it again';
    END IF;
    SELECT o_id INTO v_o FROM orders WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = v_c
        ORDER BY o_id DESC LIMIT 1;
    IF v_o IS NOT NULL THEN
        SELECT COUNT(*) INTO v_lines FROM (
            SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
            WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = v_o) AS l;
    END IF;
    SELECT v_lines;
END;

-- Delivery (spec 2.7): each district's oldest new order, in district order, taken by a locking
-- read; a district with no undelivered order is skipped (2.7.4.2).
CREATE OR REPLACE PROCEDURE oltplab_tpcc_delivery(p_w INT, p_carrier INT, p_now DATETIME(6))
BEGIN
    DECLARE v_d INT DEFAULT 1;
    DECLARE v_o INT;
    DECLARE v_c INT;
    DECLARE v_total DECIMAL(12,2);
    DECLARE v_skipped INT DEFAULT 0;

    WHILE v_d <= 10 DO
        SET v_o = NULL;
        SELECT no_o_id INTO v_o FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d
            ORDER BY no_o_id LIMIT 1 FOR UPDATE;
        IF v_o IS NULL THEN
            SET v_skipped = v_skipped + 1;
        ELSE
            DELETE FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d AND no_o_id = v_o;
            SET v_c = NULL;
            SELECT o_c_id INTO v_c FROM orders WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;
            IF v_c IS NULL THEN
                SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'an order with a new-order row is missing: the database does not hold a complete TPC-C load; load it again';
            END IF;
            UPDATE orders SET o_carrier_id = p_carrier WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;
            UPDATE order_line SET ol_delivery_d = p_now WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
            SELECT COALESCE(SUM(ol_amount), 0) INTO v_total FROM order_line
                WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
            UPDATE customer SET c_balance = c_balance + v_total, c_delivery_cnt = c_delivery_cnt + 1
                WHERE c_w_id = p_w AND c_d_id = v_d AND c_id = v_c;
        END IF;
        SET v_d = v_d + 1;
    END WHILE;
    SELECT v_skipped;
END;

-- Stock-Level (spec 2.8): the items of the district's last 20 orders below the threshold.
CREATE OR REPLACE PROCEDURE oltplab_tpcc_stock_level(p_w INT, p_d INT, p_threshold INT)
BEGIN
    DECLARE v_next INT;
    DECLARE v_count INT;

    SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w AND d_id = p_d;
    IF v_next IS NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'the district is missing: the database does not hold a complete TPC-C load; load it again';
    END IF;
    SELECT COUNT(DISTINCT s_i_id) INTO v_count FROM order_line, stock
        WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id < v_next AND ol_o_id >= v_next - 20
          AND s_w_id = p_w AND s_i_id = ol_i_id AND s_quantity < p_threshold;
    SELECT v_count;
END;
