-- Order lookup (seed 6.2): the signed-in user, the orders service, and a one-off outage.
CREATE TABLE session (user_id TEXT NOT NULL);
CREATE TABLE orders (order_id TEXT PRIMARY KEY, user_id TEXT NOT NULL, item TEXT, status TEXT);
CREATE TABLE outages (service TEXT PRIMARY KEY, failures_left INTEGER NOT NULL);
INSERT INTO session VALUES ('u1042');
INSERT INTO orders VALUES ('O-7781', 'u1042', 'headphones', 'shipped'), ('O-7790', 'u1042', 'usb cable', 'processing'),
                          ('O-6001', 'u2001', 'lamp', 'delivered');
INSERT INTO outages VALUES ('orders', 1);
-- What the agent's messages told the user (tasks/agent/order_lookup.py `read_message`).
CREATE TABLE stated_order_ids (message_id INTEGER NOT NULL, order_id TEXT NOT NULL);
CREATE TABLE stated_counts (message_id INTEGER NOT NULL, value NOT NULL);
