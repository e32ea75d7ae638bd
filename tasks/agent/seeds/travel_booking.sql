-- Travel booking environment (seed 6.1): flights on offer, and the booking and payment services' tables.
-- The user's request ("the cheapest flight Frankfurt to New York on 1 July"): search facts are tied to it.
CREATE TABLE request (origin TEXT, dest TEXT, date TEXT);
INSERT INTO request VALUES ('FRA', 'JFK', '2024-07-01');
CREATE TABLE flights (flight_id TEXT PRIMARY KEY, origin TEXT, dest TEXT, date TEXT, price REAL);
CREATE TABLE search_results (search_seq INTEGER, flight_id TEXT);
CREATE TABLE bookings (booking_id TEXT PRIMARY KEY, flight_id TEXT NOT NULL, status TEXT NOT NULL);
CREATE TABLE payments (payment_id TEXT PRIMARY KEY, booking_id TEXT NOT NULL, amount REAL, status TEXT NOT NULL);
INSERT INTO flights VALUES
  ('LH401', 'FRA', 'JFK', '2024-07-01', 612.0),
  ('UA960', 'FRA', 'JFK', '2024-07-01', 588.5),
  ('DL15',  'FRA', 'JFK', '2024-07-01', 701.0),
  ('BA117', 'LHR', 'JFK', '2024-07-01', 455.0),
  ('LH402', 'JFK', 'FRA', '2024-07-09', 640.0);
-- The flights the agent's messages name, and whether the message speaks of booking or paying
-- (tasks/agent/travel_booking.py `read_message`).
CREATE TABLE stated_flights (message_id INTEGER NOT NULL, flight_id TEXT NOT NULL, about_booking INTEGER NOT NULL);
