-- Trip planning (seed 6.4): hotels, hotel bookings and itineraries.
CREATE TABLE hotels (hotel_id TEXT PRIMARY KEY, city TEXT, name TEXT, price REAL);
CREATE TABLE hotel_bookings (booking_id TEXT PRIMARY KEY, hotel_id TEXT, nights INTEGER);
CREATE TABLE itineraries (itinerary_id TEXT PRIMARY KEY, city TEXT, days INTEGER, plan TEXT);
INSERT INTO hotels VALUES ('H-LIS-1', 'Lisbon', 'Casa Alfama', 120.0), ('H-LIS-2', 'Lisbon', 'Hotel Baixa', 95.0);
-- What the user asked for, as the session knows it ("three days in Lisbon with a hotel"), and what the
-- agent's messages told the user (tasks/agent/trip_planning.py `read_message`).
CREATE TABLE request (city TEXT NOT NULL, nights INTEGER NOT NULL, days INTEGER NOT NULL);
INSERT INTO request VALUES ('Lisbon', 3, 3);
CREATE TABLE stated_hotels (message_id INTEGER NOT NULL, hotel_id TEXT NOT NULL);
CREATE TABLE stated_days (message_id INTEGER NOT NULL, day INTEGER NOT NULL);
CREATE TABLE stated_numbers (message_id INTEGER NOT NULL, value NOT NULL);
